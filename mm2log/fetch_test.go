package mm2log

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// syncKey and syncValue are MirrorMaker 2's encoding (OffsetSync.java): key topic STRING and
// partition INT32, value upstream and downstream INT64.
func syncKey(topic string, part int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(topic)))
	b = append(b, topic...)
	return binary.BigEndian.AppendUint32(b, uint32(part))
}

func syncValue(up, down int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(up)), uint64(down))
}

// rec is a sync record at offset off: {topic, partition, upstream, downstream}.
type rec struct {
	off        int64
	key, value []byte
}

func sync(off int64, topic string, part int32, up, down int64) rec {
	return rec{off, syncKey(topic, part), syncValue(up, down)}
}

// v2 is a record batch of recs starting at base and ending at last (compaction may have
// removed records at both ends, so last need not be the last record's offset).
func v2(base, last int64, recs ...rec) *sarama.Records {
	rb := &sarama.RecordBatch{FirstOffset: base, LastOffsetDelta: int32(last - base), ProducerID: -1, Version: 2}
	for _, r := range recs {
		rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: r.off - base, Key: r.key, Value: r.value})
	}
	return &sarama.Records{RecordBatch: rb}
}

func marker(off int64) *sarama.Records {
	r := v2(off, off, rec{off, []byte{0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0}})
	r.RecordBatch.Control, r.RecordBatch.IsTransactional, r.RecordBatch.ProducerID = true, true, 7
	return r
}

func TestApply(t *testing.T) {
	cases := []struct {
		name     string
		next     int64
		end      int64
		sets     []*sarama.Records
		wantNext int64
		want     map[migrate.TopicPartition][][2]int64 // syncs kept per partition
		wantErr  string
	}{
		{name: "compaction gaps: positions follow the batches, not the records", next: 0, end: 20,
			sets:     []*sarama.Records{v2(0, 4, sync(2, "t", 0, 10, 0)), v2(9, 12, sync(12, "t", 0, 20, 9))},
			wantNext: 13, want: map[migrate.TopicPartition][][2]int64{{Topic: "t", Partition: 0}: {{10, 0}, {20, 9}}}},
		{name: "a control batch at end-1 ends the read", next: 5, end: 7,
			sets:     []*sarama.Records{v2(5, 5, sync(5, "t", 1, 3, 3)), marker(6)},
			wantNext: 7, want: map[migrate.TopicPartition][][2]int64{{Topic: "t", Partition: 1}: {{3, 3}}}},
		{name: "records at or past the end of the read are left out", next: 0, end: 2,
			sets:     []*sarama.Records{v2(0, 3, sync(0, "t", 0, 1, 1), sync(1, "t", 0, 2, 2), sync(2, "t", 0, 3, 3))},
			wantNext: 4, want: map[migrate.TopicPartition][][2]int64{{Topic: "t", Partition: 0}: {{1, 1}, {2, 2}}}},
		{name: "records before the position are left out", next: 1, end: 5,
			sets:     []*sarama.Records{v2(0, 1, sync(0, "t", 0, 9, 9), sync(1, "t", 0, 10, 10))},
			wantNext: 2, want: map[migrate.TopicPartition][][2]int64{{Topic: "t", Partition: 0}: {{10, 10}}}},
		{name: "a reset in log order forgets the syncs before it", next: 0, end: 3,
			sets:     []*sarama.Records{v2(0, 2, sync(0, "t", 0, 50, 40), sync(1, "u", 0, 7, 7), sync(2, "t", 0, 5, 41))},
			wantNext: 3, want: map[migrate.TopicPartition][][2]int64{{Topic: "t", Partition: 0}: {{5, 41}}, {Topic: "u", Partition: 0}: {{7, 7}}}},
		{name: "an empty answer ends a compacted tail", next: 4, end: 9, wantNext: 9, want: map[migrate.TopicPartition][][2]int64{}},
		{name: "a record that does not decode is an error naming its offset", next: 0, end: 5,
			sets:    []*sarama.Records{v2(0, 3, sync(2, "t", 0, 1, 1), rec{3, syncKey("t", 0), []byte{1, 2}})},
			wantErr: "partition 0 offset 3: offset sync: value: record cut short"},
		{name: "a tombstone is an error naming its offset", next: 0, end: 5,
			sets:    []*sarama.Records{v2(4, 4, rec{4, syncKey("t", 0), nil})},
			wantErr: "offset 4: offset sync"},
		{name: "a transactional data batch is refused", next: 0, end: 5,
			sets: func() []*sarama.Records {
				r := v2(1, 1, sync(1, "t", 0, 1, 1))
				r.RecordBatch.IsTransactional = true
				return []*sarama.Records{r}
			}(),
			wantErr: "offset 1: written in a transaction"},
		{name: "only batches before the position: an error, not a loop", next: 5, end: 9,
			sets: []*sarama.Records{v2(0, 2, sync(1, "t", 0, 1, 1))}, wantErr: "no batch at or after it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reader{cluster: "the test cluster"}
			p := &progress{topic: "syncs", part: 0, next: tc.next, end: tc.end, maxBytes: fetchPartitionBytes}
			out := Log{Syncs: map[migrate.TopicPartition]mm2.Syncs{}}
			err := r.apply(&sarama.FetchResponseBlock{RecordsSet: tc.sets}, p, false, addSyncs(out.Syncs), &counts{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.next != tc.wantNext {
				t.Errorf("next %d, want %d", p.next, tc.wantNext)
			}
			if len(out.Syncs) != len(tc.want) {
				t.Errorf("syncs of %d partitions, want %d: %v", len(out.Syncs), len(tc.want), out.Syncs)
			}
			for tp, pairs := range tc.want {
				checkSyncs(t, tp, out.Syncs[tp], pairs)
			}
		})
	}
}

// addSyncs decodes each record as an offset sync into syncs.
func addSyncs(syncs map[migrate.TopicPartition]mm2.Syncs) func(logbatch.Record) error {
	return func(rec logbatch.Record) error {
		s, err := mm2.DecodeOffsetSync(rec.Key, rec.Value)
		if err != nil {
			return err
		}
		tp := migrate.TopicPartition{Topic: s.Topic, Partition: s.Partition}
		l := syncs[tp]
		l.Add(s)
		syncs[tp] = l
		return nil
	}
}

// checkSyncs compares the syncs kept with pairs through Translate: each pair's upstream
// offset must translate exactly to its downstream one, and nothing else may be kept.
func checkSyncs(t *testing.T, tp migrate.TopicPartition, got mm2.Syncs, pairs [][2]int64) {
	t.Helper()
	if got.Len() != len(pairs) {
		t.Errorf("%v: %d syncs kept, want %d", tp, got.Len(), len(pairs))
	}
	for _, p := range pairs {
		if tr := got.Translate(p[0], 0); tr.Class != mm2.Exact || tr.Target != p[1] {
			t.Errorf("%v: Translate(%d) = %+v, want exact %d", tp, p[0], tr, p[1])
		}
	}
}

func TestApplyGrowsFetchSizeForAPartialBatch(t *testing.T) {
	r := &Reader{cluster: "c"}
	p := &progress{topic: "syncs", next: 3, end: 10, maxBytes: fetchPartitionBytes}
	add, n := addSyncs(map[migrate.TopicPartition]mm2.Syncs{}), &counts{}
	if err := r.apply(&sarama.FetchResponseBlock{Partial: true}, p, false, add, n); err != nil || p.maxBytes != 2*fetchPartitionBytes || p.next != 3 {
		t.Fatalf("partial: err %v, maxBytes %d, next %d", err, p.maxBytes, p.next)
	}
	if err := r.apply(&sarama.FetchResponseBlock{}, p, true, add, n); err == nil || p.next != 3 {
		t.Fatalf("throttled empty answer: err %v, next %d: want an error and no progress", err, p.next)
	}
	p.maxBytes = maxPartitionBytes
	if err := r.apply(&sarama.FetchResponseBlock{Partial: true}, p, false, add, n); err == nil {
		t.Fatal("a batch larger than the largest fetch: want an error")
	}
}
