package mm2log

import (
	"context"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

func logOf(syncs map[migrate.TopicPartition][][2]int64) Log {
	l := Log{Topic: Topic("target"), Syncs: map[migrate.TopicPartition]mm2.Syncs{}}
	for tp, pairs := range syncs {
		var s mm2.Syncs
		for _, p := range pairs {
			s.Add(mm2.OffsetSync{Topic: tp.Topic, Partition: tp.Partition, Upstream: p[0], Downstream: p[1]})
		}
		l.Syncs[tp] = s
	}
	return l
}

var (
	orders0 = migrate.TopicPartition{Topic: "orders", Partition: 0}
	orders1 = migrate.TopicPartition{Topic: "orders", Partition: 1}
	other0  = migrate.TopicPartition{Topic: "other", Partition: 0}
)

func testTranslator(t *testing.T) *Translator {
	t.Helper()
	tr, err := NewTranslator(logOf(map[migrate.TopicPartition][][2]int64{
		orders0: {{100, 0}, {120, 15}, {150, 40}},
		orders1: {{0, 0}, {10, 10}},
	}), mm2.Policy{Name: mm2.PolicyDefault, SourceAlias: "source"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The real translator passes the suite migratetest's fake passes.
func TestTranslatorContract(t *testing.T) {
	contract.TestTranslator(t, testTranslator(t), []migrate.TopicPartition{orders0, orders1, other0}, 200)
}

func TestTranslate(t *testing.T) {
	tr := testTranslator(t)
	cases := []struct {
		name string
		tp   migrate.TopicPartition
		off  int64
		want migrate.Placement
		why  string
	}{
		{name: "exact", tp: orders0, off: 120, want: migrate.Placement{Offset: 15}},
		{name: "rounded down", tp: orders0, off: 130, want: migrate.Placement{Offset: 16, MaxReread: 9}},
		{name: "below the first sync", tp: orders0, off: 99, want: migrate.Placement{Blocked: migrate.ClassBelowFirstSync}, why: "below the first offset sync"},
		{name: "behind", tp: orders1, off: 21, want: migrate.Placement{Blocked: migrate.ClassReplicationBehind}, why: "offset.lag.max 10"},
		{name: "no sync", tp: other0, off: 5, want: migrate.Placement{Blocked: migrate.ClassNoSync}, why: "mm2-offset-syncs.target.internal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tr.Translate("g", tc.tp, tc.off)
			if !strings.Contains(got.Reason, tc.why) || (tc.why == "") != (got.Reason == "") {
				t.Errorf("reason %q, want one with %q", got.Reason, tc.why)
			}
			got.Reason = ""
			if got != tc.want {
				t.Errorf("Translate(%s, %d) = %+v, want %+v", tc.tp, tc.off, got, tc.want)
			}
		})
	}
	if got := tr.Topic("orders"); got != "source.orders" {
		t.Errorf("Topic = %q", got)
	}
}

func TestNewTranslatorRefuses(t *testing.T) {
	if _, err := NewTranslator(Log{}, mm2.Policy{Name: "mirror"}, 0); err == nil {
		t.Error("an unknown policy was taken")
	}
	if _, err := NewTranslator(Log{}, mm2.Policy{Name: mm2.PolicyIdentity}, -1); err == nil {
		t.Error("a negative offset.lag.max was taken")
	}
}

// With the target's log ends, an offset further past the latest sync than offset.lag.max is
// placed once the target holds every record before it; a partition the target lacks keeps the
// lag rule.
func TestTranslatorWithTargetEnds(t *testing.T) {
	k := migratetest.NewKafkaStore()
	// orders/1 syncs 0->0, 10->10: its replica holds 30 records, so source 21..30 are placed.
	k.AddTopic("source.orders", migrate.PartitionRange{LogEnd: 16}, migrate.PartitionRange{LogEnd: 30})
	tr, err := testTranslator(t).WithTargetEnds(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tp   migrate.TopicPartition
		off  int64
		want migrate.Placement
	}{
		{tp: orders1, off: 30, want: migrate.Placement{Offset: 11, MaxReread: 19}},
		{tp: orders1, off: 31, want: migrate.Placement{Blocked: migrate.ClassReplicationBehind}},
		{tp: orders0, off: 155, want: migrate.Placement{Offset: 41, MaxReread: 4}},                // within offset.lag.max: as before
		{tp: orders0, off: 165, want: migrate.Placement{Blocked: migrate.ClassReplicationBehind}}, // the replica holds too few records
	}
	for _, tc := range cases {
		got := tr.Translate("g", tc.tp, tc.off)
		got.Reason = ""
		if got != tc.want {
			t.Errorf("Translate(%s, %d) = %+v, want %+v", tc.tp, tc.off, got, tc.want)
		}
	}
	contract.TestTranslator(t, tr, []migrate.TopicPartition{orders0, orders1, other0}, 200)
}

// TestTopicSeparated: the offset-syncs topic follows replication.policy.separator, as
// MirrorMaker 2 names its internal topics since KIP-690.
func TestTopicSeparated(t *testing.T) {
	for _, c := range []struct{ alias, sep, want string }{
		{"tgt", ".", "mm2-offset-syncs.tgt.internal"},
		{"tgt", "_", "mm2-offset-syncs_tgt_internal"},
		{"b", "--", "mm2-offset-syncs--b--internal"},
	} {
		if got := TopicSeparated(c.alias, c.sep); got != c.want {
			t.Errorf("TopicSeparated(%q, %q) = %q, want %q", c.alias, c.sep, got, c.want)
		}
	}
	if got := Topic("tgt"); got != "mm2-offset-syncs.tgt.internal" {
		t.Errorf("Topic(tgt) = %q", got)
	}
}

// A group's own checkpoint places its offset where the syncs left leave it below the first one,
// or round it down further than the checkpoint does; other groups are not placed by it.
func TestTranslatorWithCheckpoints(t *testing.T) {
	src := migrate.TopicPartition{Topic: "source.orders", Partition: 0}
	cp := func(group string, up, down int64) mm2.Checkpoint {
		return mm2.Checkpoint{Group: group, Topic: src.Topic, Partition: src.Partition, Upstream: up, Downstream: down}
	}
	tr := testTranslator(t).WithCheckpoints(Checkpoints{Latest: map[CheckpointKey]mm2.Checkpoint{
		{Group: "g", TP: src}:                      cp("g", 95, 0),
		{Group: "h", TP: src}:                      cp("h", 135, 30),
		{Group: contract.TranslatorGroup, TP: src}: cp(contract.TranslatorGroup, 90, 0),
		{Group: "stale", TP: src}:                  cp("stale", 90, 7), // past the sync above it (100 at 0)
	}})
	cases := []struct {
		group string
		off   int64
		want  migrate.Placement
	}{
		{"g", 99, migrate.Placement{Offset: 0}},
		{"g", 94, migrate.Placement{Blocked: migrate.ClassBelowFirstSync}},
		{"other", 99, migrate.Placement{Blocked: migrate.ClassBelowFirstSync}},
		{"h", 140, migrate.Placement{Offset: 30, MaxReread: 10}}, // rounded down: 16, re-reading up to 19
		{"h", 130, migrate.Placement{Offset: 16, MaxReread: 9}},  // the checkpoint is above it
		{"stale", 99, migrate.Placement{Blocked: migrate.ClassBelowFirstSync}},
	}
	for _, tc := range cases {
		got := tr.Translate(tc.group, orders0, tc.off)
		got.Reason = ""
		if got != tc.want {
			t.Errorf("Translate(%s, %s, %d) = %+v, want %+v", tc.group, orders0, tc.off, got, tc.want)
		}
	}
	if tr.Checkpoints() != 4 {
		t.Errorf("Checkpoints() = %d, want 4", tr.Checkpoints())
	}
	contract.TestTranslator(t, tr, []migrate.TopicPartition{orders0, orders1, other0}, 200)
}
