package migrate

import (
	"strings"
	"testing"
	"time"
)

func TestFlagSuspect(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		zk      *int64
		start   int64
		end     int64
		mtime   time.Time
		suspect bool
	}{
		{"rewound to the log start, just written", i(0), 0, 10_000, now.Add(-time.Minute), true},
		{"more than half the log behind, written within the hour", i(4_000), 0, 10_000, now.Add(-59 * time.Minute), true},
		{"near the end, just written", i(9_990), 0, 10_000, now.Add(-time.Minute), false},
		{"exactly half the log behind", i(5_000), 0, 10_000, now.Add(-time.Minute), false},
		{"far behind but written long ago (an idle group)", i(0), 0, 10_000, now.Add(-2 * time.Hour), false},
		{"small log: under the minimum lag", i(0), 0, SuspectMinLag - 1, now, false},
		{"half a small log, at the minimum lag", i(0), 0, SuspectMinLag, now, true},
		{"behind in a log whose start moved up", i(9_000), 8_000, 10_000, now, false},
		{"mtime in the future beyond the window (clock skew)", i(0), 0, 10_000, now.Add(2 * time.Hour), false},
		{"invalid znode", nil, 0, 10_000, now, false},
		{"no mtime", i(0), 0, 10_000, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end := tt.start, tt.end
			e := Entry{ZK: tt.zk, LogStart: &start, LogEnd: &end, Mtime: tt.mtime}
			flagSuspect(&e, now)
			if (e.Suspect != "") != tt.suspect {
				t.Fatalf("suspect %q, want flagged %t", e.Suspect, tt.suspect)
			}
			if tt.suspect && !strings.Contains(e.Suspect, "behind the log end") {
				t.Errorf("reason %q does not say why", e.Suspect)
			}
		})
	}
}

// TestBuildFlagsSuspectWithoutChangingTheAction: the flag rides on the entry and the summary;
// the action stays what the policy decided.
func TestBuildFlagsSuspectWithoutChangingTheAction(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	in := Inputs{
		Legacy: []LegacyGroup{{Group: "g", Offsets: []LegacyOffset{
			{Topic: "t", Partition: 0, Offset: 3, Path: "/consumers/g/offsets/t/0", Mtime: now.Add(-time.Minute)},
			{Topic: "t", Partition: 1, Offset: 990, Path: "/consumers/g/offsets/t/1", Mtime: now.Add(-time.Minute)},
		}}},
		Groups: map[string]GroupState{"g": {State: "Empty"}},
		Topics: map[string]TopicInfo{"t": {Exists: true, Partitions: map[int32]PartitionRange{0: {0, 1000}, 1: {0, 1000}}}},
	}
	p, err := Build(in, Policy{OnConflict: ConflictMax, OutOfRange: RangeFail}, now)
	if err != nil {
		t.Fatal(err)
	}
	es := p.Groups[0].Entries
	if es[0].Suspect == "" || es[1].Suspect != "" || es[0].Action != ActionWrite || p.Summary().Suspect != 1 {
		t.Fatalf("entries %+v, summary %+v", es, p.Summary())
	}
}
