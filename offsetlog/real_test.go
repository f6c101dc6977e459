package offsetlog_test

import (
	"maps"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
)

// TestRealRecords commits through zk2kafka's writer on the real broker, then reads the raw
// records back from __consumer_offsets and decodes them; commits again (the later commit
// wins), deletes one offset and then the group (tombstones remove them), and after each step
// compares the reader's replay with the coordinator's own answer (OffsetFetch).
func TestRealRecords(t *testing.T) {
	e := openEnv(t)
	topic := e.topic(t, 3)
	group := stacktest.Name(t, "g")
	meta := "zk2kafka v1.2.3 from zk mtime=2023-01-02T03:04:05Z ✓ grüße"
	first := []migrate.Commit{cm(topic, 0, 5, meta), cm(topic, 1, 7, ""), cm(topic, 2, 0, meta)}
	e.commit(t, group, first...)

	// The raw records: one per commit, in the group's partition, decodable, as committed.
	part := offsetlog.Partition(group, e.parts)
	var mine []rawRecord
	versions := map[int16]int{}
	for _, r := range e.rawRecords(t, part) {
		if r.control {
			continue
		}
		k, err := offsetlog.DecodeKey(r.key)
		if err != nil {
			t.Fatalf("decode key at %d: %v", r.offset, err)
		}
		if k.Kind != offsetlog.KindOffset || k.Group != group {
			continue
		}
		v, err := offsetlog.DecodeValue(k.Version, r.value)
		if err != nil {
			t.Fatalf("decode value at %d: %v", r.offset, err)
		}
		mine = append(mine, r)
		versions[v.Version]++
		want := first[k.Partition]
		if k.Topic != topic || k.Version != 1 || v.Offset != want.Offset || v.Metadata != want.Metadata ||
			v.LeaderEpoch != -1 || v.CommitTimestamp <= 0 || v.ExpireTimestamp != -1 || v.Tombstone {
			t.Errorf("record at %d: key %+v value %+v, want v1 key of %s and commit %+v with leader epoch -1", r.offset, k, v, topic, want)
		}
	}
	if len(mine) != len(first) {
		t.Fatalf("%d records of group %s in %s partition %d, want %d", len(mine), group, offsetlog.Topic, part, len(first))
	}
	t.Logf("%s stack: offset commit value versions written: %v", e.st.Profile, versions)
	if versions[3]+versions[4] != len(first) {
		t.Errorf("value versions %v: Kafka 3.x writes v3, 4.x v4", versions)
	}
	writeSeeds(t, e.st.Profile, mine)
	e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 5, 1: 7, 2: 0})

	// Commit again: the later commit wins, the others stay.
	e.commit(t, group, cm(topic, 0, 11, "second"), cm(topic, 2, 3, meta))
	got := e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 11, 1: 7, 2: 3})
	if c := got[migrate.TopicPartition{Topic: topic, Partition: 0}]; c.Metadata != "second" {
		t.Errorf("partition 0 metadata %q after the second commit, want %q", c.Metadata, "second")
	}

	// The full read (every partition, filtered) agrees with the read of the group's partition.
	all, stats, err := e.reader.Read(testCtx(t, 2*time.Minute), func(g string) bool { return g == group })
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !maps.Equal(all[group], got) || stats.Partitions != int(e.parts) {
		t.Errorf("full read %v (%d partitions), want %v from %d", all, stats.Partitions, got, e.parts)
	}
	t.Logf("full read of %s: %+v", offsetlog.Topic, stats)

	admin, err := sarama.NewClusterAdminFromClient(e.sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteConsumerGroupOffset(group, topic, 1); err != nil {
		t.Fatalf("delete offset %s/1 of group %s: %v", topic, group, err)
	}
	e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 11, 2: 3})
	tombstones := 0
	for _, r := range e.rawRecords(t, part) {
		if k, err := offsetlog.DecodeKey(r.key); err == nil && k.Group == group && k.Partition == 1 && r.value == nil {
			if v, err := offsetlog.DecodeValue(k.Version, r.value); err != nil || !v.Tombstone {
				t.Errorf("tombstone at %d decodes as %+v, %v", r.offset, v, err)
			}
			tombstones++
		}
	}
	if tombstones != 1 {
		t.Errorf("%d tombstones for %s/1 of group %s, want 1", tombstones, topic, group)
	}

	if err := admin.DeleteConsumerGroup(group); err != nil {
		t.Fatalf("delete group %s: %v", group, err)
	}
	if left, _ := e.readGroup(t, group); len(left) != 0 {
		t.Errorf("after deleting group %s the replay still has %v", group, left)
	}
}

// checkAgainstOffsetFetch reads the group from the topic and checks it has exactly want (by
// partition of its one topic) and matches, field by field, what OffsetFetch returns.
func (e *env) checkAgainstOffsetFetch(t *testing.T, group string, want map[int32]int64) map[migrate.TopicPartition]offsetlog.Committed {
	t.Helper()
	got, stats := e.readGroup(t, group)
	fetched, err := e.kw.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil {
		t.Fatal(err)
	}
	gotOff := map[int32]int64{}
	for tp, c := range got {
		gotOff[tp.Partition] = c.Offset
		f, ok := fetched[tp]
		if !ok || f.Offset != c.Offset || f.Metadata != c.Metadata || f.LeaderEpoch != c.LeaderEpoch {
			t.Errorf("%s: topic replay %+v, OffsetFetch %+v (present %v)", tp, c, f, ok)
		}
	}
	if !maps.Equal(gotOff, want) || len(fetched) != len(got) {
		t.Errorf("replay of group %s: %v, want %v; OffsetFetch has %d partitions", group, gotOff, want, len(fetched))
	}
	if stats.Partitions != 1 {
		t.Errorf("ReadGroups read %d partitions, want only the group's", stats.Partitions)
	}
	return got
}
