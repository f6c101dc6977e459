package migrate_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// testNow stamps plans; no test compares it with the wall clock.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

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

// mustBuild builds the plan and checks what must hold for every plan Build returns: it
// validates, and it survives an encode/decode round trip unchanged.
func mustBuild(t *testing.T, in migrate.Inputs, p migrate.Policy) migrate.Plan {
	t.Helper()
	plan, err := migrate.Build(in, p, testNow)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := plan.Validate(); err != nil {
		t.Fatalf("Build returned a plan that does not validate: %v", err)
	}
	var buf bytes.Buffer
	if err := migratetest.EncodePlan(&buf, plan); err != nil {
		t.Fatalf("EncodePlan: %v", err)
	}
	back, err := migratetest.DecodePlan(&buf)
	if err != nil {
		t.Fatalf("DecodePlan of an encoded plan: %v", err)
	}
	if !reflect.DeepEqual(normalize(back), normalize(plan)) {
		t.Fatalf("plan changed in a round trip:\n got %+v\nwant %+v", back, plan)
	}
	return plan
}

// normalize makes time values comparable with DeepEqual after a JSON round trip.
func normalize(p migrate.Plan) migrate.Plan {
	p.CreatedAt = p.CreatedAt.UTC()
	for gi := range p.Groups {
		for ei := range p.Groups[gi].Entries {
			e := &p.Groups[gi].Entries[ei]
			e.Mtime = e.Mtime.UTC()
		}
	}
	return p
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
