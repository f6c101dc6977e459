package mm2log_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// deleteBelow moves partition 0 of topic's log start to off.
func deleteBelow(t *testing.T, st *stacktest.Stack, topic string, off int64) {
	t.Helper()
	conf := producerConfig(t, st)
	if !conf.Version.IsAtLeast(sarama.V0_11_0_0) {
		t.Skipf("DeleteRecords came with Kafka 0.11; the broker speaks %s", conf.Version)
	}
	admin, err := sarama.NewClusterAdmin([]string{st.Kafka}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer closeOrFail(t, admin.Close)
	if err := admin.DeleteRecords(topic, map[int32]int64{0: off}); err != nil {
		t.Fatalf("delete records of %s below %d: %v", topic, off, err)
	}
}

// Update reads only what was written since the last read and keeps the syncs read before, even
// when they are gone from the log since (compaction does that to the offset-syncs topic; here
// records below the last read's end are deleted); it never changes the Log it was given; and a
// log that moved past the last read's end is read whole again.
func TestUpdateKeepsWhatWasRead(t *testing.T) {
	st := stacktest.Get(t)
	orders0 := migrate.TopicPartition{Topic: "orders", Partition: 0}
	rec := func(up, down int64) [2][]byte {
		k, v := syncRecord("orders", 0, up, down)
		return [2][]byte{k, v}
	}
	topic := newTopic(t, st, "delete", [][2][]byte{rec(100, 0), rec(200, 95)})
	r := open(t, st)
	first, err := r.Read(testCtx(t, time.Minute), topic)
	if err != nil {
		t.Fatal(err)
	}
	produce(t, st, topic, [][2][]byte{rec(300, 190)})
	deleteBelow(t, st, topic, 2)
	next, err := r.Update(testCtx(t, time.Minute), first)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := r.Read(testCtx(t, time.Minute), topic)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name     string
		log      mm2log.Log
		syncs    int
		records  int64
		off      int64
		want     mm2.Class
		wantDown int64
	}{
		{"the first read is left as it was", first, 2, 2, 301, mm2.Behind, 0},
		{"the update keeps the deleted syncs and adds the new one", next, 3, 3, 250, mm2.RoundedDown, 96},
		{"the update pins the new sync", next, 3, 3, 300, mm2.Exact, 190},
		{"a read whole again finds only what is left", whole, 1, 1, 250, mm2.BelowFirstSync, 0},
	}
	for _, c := range checks {
		s := c.log.Syncs[orders0]
		tr := s.Translate(c.off, 100)
		if s.Len() != c.syncs || c.log.Records != c.records || tr.Class != c.want || tr.Target != c.wantDown {
			t.Errorf("%s: %d syncs, %d records, %d -> %s %d; want %d, %d, %s %d", c.name, s.Len(), c.log.Records, c.off, tr.Class, tr.Target,
				c.syncs, c.records, c.want, c.wantDown)
		}
	}
	// The log start past where the update ended: read whole again, the syncs now left only.
	produce(t, st, topic, [][2][]byte{rec(400, 280), rec(500, 370)})
	deleteBelow(t, st, topic, 4)
	again, err := r.Update(testCtx(t, time.Minute), next)
	if err != nil {
		t.Fatal(err)
	}
	if s := again.Syncs[orders0]; s.Len() != 1 || again.Start[0] != 4 || again.End[0] != 5 {
		t.Errorf("after the log start moved past the last read: %d syncs of [%d, %d), want 1 of [4, 5)", s.Len(), again.Start[0], again.End[0])
	}
}

// checkpointRecord is one checkpoints record in MirrorMaker 2's own encoding (Checkpoint.java):
// key group and topic (strings) and partition (int32); value version 0 (int16), upstream and
// downstream offsets (int64) and metadata (string).
func checkpointRecord(group, topic string, part int32, up, down int64) [2][]byte {
	str := func(b []byte, s string) []byte {
		return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
	}
	k := binary.BigEndian.AppendUint32(str(str(nil, group), topic), uint32(part))
	v := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint16(nil, 0), uint64(up)), uint64(down))
	return [2][]byte{k, str(v, "")}
}

// ReadCheckpoints keeps each group's latest checkpoint of each partition, and a read from the
// last one's end adds what came since.
func TestReadCheckpointsStack(t *testing.T) {
	st := stacktest.Get(t)
	topic := compactedTopic(t, st, [][2][]byte{
		checkpointRecord("g", "source.orders", 0, 100, 10),
		checkpointRecord("h", "source.orders", 0, 50, 5),
		checkpointRecord("g", "source.orders", 0, 120, 30),
	})
	r := open(t, st)
	first, err := r.ReadCheckpoints(testCtx(t, time.Minute), mm2log.Checkpoints{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	produce(t, st, topic, [][2][]byte{checkpointRecord("h", "source.orders", 0, 60, 6)})
	next, err := r.ReadCheckpoints(testCtx(t, time.Minute), first)
	if err != nil {
		t.Fatal(err)
	}
	key := func(g string) mm2log.CheckpointKey {
		return mm2log.CheckpointKey{Group: g, TP: migrate.TopicPartition{Topic: "source.orders", Partition: 0}}
	}
	checks := []struct {
		name     string
		c        mm2log.Checkpoints
		group    string
		up, down int64
		records  int64
	}{
		{"the latest of g", first, "g", 120, 30, 3},
		{"h before the update", first, "h", 50, 5, 3},
		{"h after it", next, "h", 60, 6, 4},
		{"g still there", next, "g", 120, 30, 4},
	}
	for _, c := range checks {
		got := c.c.Latest[key(c.group)]
		if got.Upstream != c.up || got.Downstream != c.down || c.c.Records != c.records {
			t.Errorf("%s: %+v after %d records, want %d -> %d after %d", c.name, got, c.c.Records, c.up, c.down, c.records)
		}
	}
}
