package offsetlog

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func commitRec(off int64, group string, p int32, offset int64) logbatch.Record {
	v := OffsetValue{Version: 3, Offset: offset, LeaderEpoch: -1, Metadata: "m", CommitTimestamp: 1000 + off}
	return logbatch.Record{Offset: off, Key: keyBytes(1, group, "t", p), Value: valueBytes(v)}
}

func tombRec(off int64, group string, p int32) logbatch.Record {
	return logbatch.Record{Offset: off, Key: keyBytes(1, group, "t", p)}
}

func plain(recs ...logbatch.Record) logbatch.Batch {
	return logbatch.Batch{Base: recs[0].Offset, Last: recs[len(recs)-1].Offset, ProducerID: logbatch.NoProducerID, Records: recs}
}

func txn(pid int64, recs ...logbatch.Record) logbatch.Batch {
	b := plain(recs...)
	b.ProducerID, b.Transactional = pid, true
	return b
}

func marker(pid, off int64, typ int16) logbatch.Batch {
	return logbatch.Batch{Base: off, Last: off, ProducerID: pid, Transactional: true, Control: true,
		Records: []logbatch.Record{{Offset: off, Key: controlKey(typ), Value: []byte{0, 0, 0, 0, 0, 0}}}}
}

func TestReplay(t *testing.T) {
	type want map[string]int64 // "group/partition" -> offset
	tests := []struct {
		name    string
		batches []logbatch.Batch
		keep    func(string) bool
		want    want
		check   func(t *testing.T, s Stats)
	}{
		{"later commit wins", []logbatch.Batch{plain(commitRec(0, "g", 0, 5), commitRec(1, "g", 1, 7)), plain(commitRec(2, "g", 0, 9))},
			nil, want{"g/0": 9, "g/1": 7}, nil},
		{"tombstone deletes, a later commit restores", []logbatch.Batch{
			plain(commitRec(0, "g", 0, 5), commitRec(1, "g", 1, 6)), plain(tombRec(2, "g", 0), tombRec(3, "g", 1)),
			plain(commitRec(4, "g", 1, 8))}, nil, want{"g/1": 8},
			func(t *testing.T, s Stats) { expect(t, "tombstones", s.Tombstones, 2) }},
		{"committed transaction applies", []logbatch.Batch{txn(7, commitRec(0, "g", 0, 5)), marker(7, 1, controlCommit)},
			nil, want{"g/0": 5}, func(t *testing.T, s Stats) { expect(t, "txn commits", s.TransactionalCommits, 1) }},
		{"aborted transaction is dropped", []logbatch.Batch{plain(commitRec(0, "g", 0, 1)), txn(7, commitRec(1, "g", 0, 5)), marker(7, 2, controlAbort)},
			nil, want{"g/0": 1}, func(t *testing.T, s Stats) { expect(t, "aborted", s.AbortedCommits, 1) }},
		{"open transaction is not applied", []logbatch.Batch{plain(commitRec(0, "g", 0, 1)), txn(7, commitRec(1, "g", 0, 5), commitRec(2, "g", 1, 6))},
			nil, want{"g/0": 1}, func(t *testing.T, s Stats) {
				expect(t, "open txns", int64(s.OpenTransactions), 1)
				expect(t, "pending", s.PendingCommits, 2)
			}},
		{"marker of another producer leaves it pending", []logbatch.Batch{txn(7, commitRec(0, "g", 0, 5)), marker(8, 1, controlCommit)},
			nil, want{}, func(t *testing.T, s Stats) { expect(t, "open txns", int64(s.OpenTransactions), 1) }},
		{"plain commit after the txn record wins over its commit", []logbatch.Batch{txn(7, commitRec(0, "g", 0, 5)), plain(commitRec(1, "g", 0, 9)), marker(7, 2, controlCommit)},
			nil, want{"g/0": 9}, nil},
		{"txn record after a plain commit wins at commit", []logbatch.Batch{plain(commitRec(0, "g", 0, 9)), txn(7, commitRec(1, "g", 0, 5)), marker(7, 2, controlCommit)},
			nil, want{"g/0": 5}, nil},
		{"tombstone drops pending txn commits", []logbatch.Batch{txn(7, commitRec(0, "g", 0, 5)), plain(tombRec(1, "g", 0)), marker(7, 2, controlCommit)},
			nil, want{}, nil},
		{"unknown control type is ignored", []logbatch.Batch{txn(7, commitRec(0, "g", 0, 5)), marker(7, 1, 9), marker(7, 2, controlCommit)},
			nil, want{"g/0": 5}, func(t *testing.T, s Stats) { expect(t, "unknown control", s.UnknownControl, 1) }},
		{"filter keeps only chosen groups", []logbatch.Batch{plain(commitRec(0, "g", 0, 5), commitRec(1, "other", 0, 6))},
			func(g string) bool { return g == "g" }, want{"g/0": 5},
			func(t *testing.T, s Stats) { expect(t, "v3 values (all groups)", s.ValueVersions[3], 2) }},
		{"group metadata and unknown records are skipped", []logbatch.Batch{plain(
			logbatch.Record{Offset: 0, Key: keyBytes(2, "g", "", 0), Value: []byte{0, 3, 1, 2}},
			logbatch.Record{Offset: 1, Key: (&enc{}).i16(5).str("g").b, Value: []byte{9}},
			commitRec(2, "g", 0, 5))}, nil, want{"g/0": 5},
			func(t *testing.T, s Stats) {
				expect(t, "group records", s.GroupRecords, 1)
				expect(t, "unknown records", s.UnknownRecords, 1)
				expect(t, "records", s.Records, 3)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newPartState(0, 1, tc.keep)
			for _, b := range tc.batches {
				if err := st.apply(b, 0, 1<<62); err != nil {
					t.Fatal(err)
				}
			}
			st.finish()
			got := want{}
			for id, c := range st.offsets {
				got[id.group+"/"+string(rune('0'+id.tp.Partition))] = c.Offset
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("offsets %v, want %v", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, st.stats)
			}
		})
	}
}

func expect(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

func TestReplayFields(t *testing.T) {
	st := newPartState(0, 1, nil)
	v := OffsetValue{Version: 1, Offset: 11, Metadata: "meta", CommitTimestamp: 1700000000123, ExpireTimestamp: 1800000000000}
	b := txn(3, logbatch.Record{Offset: 40, Key: keyBytes(0, "g", "topic", 2), Value: valueBytes(v)})
	if err := st.apply(b, 0, 100); err != nil {
		t.Fatal(err)
	}
	if err := st.apply(marker(3, 41, controlCommit), 0, 100); err != nil {
		t.Fatal(err)
	}
	got := st.offsets[gtp{"g", migrate.TopicPartition{Topic: "topic", Partition: 2}}]
	want := Committed{Offset: 11, LeaderEpoch: -1, Metadata: "meta", CommitTimestamp: time.UnixMilli(1700000000123).UTC(),
		ExpireTimestamp: time.UnixMilli(1800000000000).UTC(), ValueVersion: 1, LogOffset: 40, Transactional: true}
	if got != want {
		t.Errorf("committed %+v\nwant      %+v", got, want)
	}
}

// TestReplayRange: a fetch can return a batch that starts before the position, and records at
// or past the snapshot's end are not part of the snapshot.
func TestReplayRange(t *testing.T) {
	st := newPartState(0, 1, nil)
	b := plain(commitRec(10, "g", 0, 1), commitRec(11, "g", 1, 2), commitRec(12, "g", 2, 3), commitRec(13, "g", 3, 4))
	if err := st.apply(b, 11, 13); err != nil {
		t.Fatal(err)
	}
	if len(st.offsets) != 2 || st.offsets[gtp{"g", migrate.TopicPartition{Topic: "t", Partition: 1}}].Offset != 2 ||
		st.offsets[gtp{"g", migrate.TopicPartition{Topic: "t", Partition: 2}}].Offset != 3 {
		t.Errorf("offsets %v, want only partitions 1 and 2 (records 11 and 12)", st.offsets)
	}
}

func TestReplayMisplaced(t *testing.T) {
	// "a" lives on partition 47 of 50, "consumerGroup1" on 6 (see TestPartition).
	st := newPartState(47, 50, nil)
	if err := st.apply(plain(commitRec(0, "a", 0, 1), commitRec(1, "consumerGroup1", 0, 2)), 0, 10); err != nil {
		t.Fatal(err)
	}
	if len(st.offsets) != 1 || st.stats.Misplaced != 1 {
		t.Errorf("offsets %v misplaced %d, want only group a and one misplaced", st.offsets, st.stats.Misplaced)
	}
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name string
		b    logbatch.Batch
		want string
	}{
		{"record without key", plain(logbatch.Record{Offset: 3}), "partition 0 offset 3: corrupt __consumer_offsets record: record without a key"},
		{"corrupt key", plain(logbatch.Record{Offset: 4, Key: []byte{0}}), "offset 4: corrupt"},
		{"corrupt value", plain(logbatch.Record{Offset: 5, Key: keyBytes(1, "g", "t", 1), Value: []byte{0, 3, 1}}), `offset 5: group "g" topic "t" partition 1: offset commit value v3`},
		{"empty value", plain(logbatch.Record{Offset: 6, Key: keyBytes(1, "g", "t", 1), Value: []byte{}}), "value version needs 2 bytes"},
		{"short marker", logbatch.Batch{Control: true, ProducerID: 4, Records: []logbatch.Record{{Offset: 7, Key: []byte{0, 0}}}}, "transaction marker of producer 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := newPartState(0, 1, nil).apply(tc.b, 0, 100)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("apply: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
