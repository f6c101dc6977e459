package migrate_test

import (
	"fmt"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func ptr(v int64) *int64 { return &v }

func znode(group, topic string, p int32) string {
	return fmt.Sprintf("/consumers/%s/offsets/%s/%d", group, topic, p)
}

func off(group, topic string, p int32, v int64) migrate.LegacyOffset {
	return migrate.LegacyOffset{Topic: topic, Partition: p, Offset: v, Path: znode(group, topic, p)}
}

// topic returns a topic whose partition i has log range ranges[i].
func topic(ranges ...migrate.PartitionRange) migrate.TopicInfo {
	ti := migrate.TopicInfo{Exists: true, Partitions: map[int32]migrate.PartitionRange{}}
	for i, r := range ranges {
		ti.Partitions[int32(i)] = r
	}
	return ti
}

func policies() []migrate.Policy {
	var out []migrate.Policy
	for _, c := range []migrate.ConflictPolicy{migrate.ConflictMax, migrate.ConflictZK, migrate.ConflictKafka, migrate.ConflictFail} {
		for _, r := range []migrate.RangePolicy{migrate.RangeFail, migrate.RangeClamp, migrate.RangeSkip} {
			out = append(out, migrate.Policy{OnConflict: c, OutOfRange: r})
		}
	}
	return out
}
