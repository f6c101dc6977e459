package mm2

import (
	"strings"
	"testing"
)

func syncsOf(pairs ...[2]int64) Syncs {
	var s Syncs
	for _, p := range pairs {
		s.Add(OffsetSync{Topic: "t", Partition: 0, Upstream: p[0], Downstream: p[1]})
	}
	return s
}

func TestTranslate(t *testing.T) {
	// Replication started at source offset 1000 (the log start then): syncs pin 1000->0,
	// 1100->90 (ten source records were transaction markers or deleted) and 1300->280.
	syncs := syncsOf([2]int64{1000, 0}, [2]int64{1100, 90}, [2]int64{1300, 280})
	cases := []struct {
		name   string
		syncs  Syncs
		off    int64
		want   Translation
		reason string
	}{
		{name: "pinned by a sync", syncs: syncs, off: 1100, want: Translation{Class: Exact, Target: 90}},
		{name: "the first sync", syncs: syncs, off: 1000, want: Translation{Class: Exact, Target: 0}},
		{name: "just past a sync: nothing to read again", syncs: syncs, off: 1001, want: Translation{Class: RoundedDown, Target: 1}},
		{name: "between syncs: bounded by the source records since the sync", syncs: syncs, off: 1050,
			want: Translation{Class: RoundedDown, Target: 1, MaxReread: 49}},
		{name: "between syncs: bounded by the target records up to the next sync", syncs: syncs, off: 1099,
			want: Translation{Class: RoundedDown, Target: 1, MaxReread: 89}},
		{name: "past the latest sync, within offset.lag.max", syncs: syncs, off: 1350,
			want: Translation{Class: RoundedDown, Target: 281, MaxReread: 49}},
		{name: "past the latest sync by more than offset.lag.max", syncs: syncs, off: 1401,
			want: Translation{Class: Behind}, reason: "101 past the latest offset sync (source 1300 at target 280)"},
		{name: "below the first sync", syncs: syncs, off: 999,
			want: Translation{Class: BelowFirstSync}, reason: "below the first offset sync left (source 1000 at target 0)"},
		{name: "no sync", off: 5, want: Translation{Class: NoSync}, reason: "not replicated"},
		{name: "a source partition started again forgets the syncs before",
			syncs: syncsOf([2]int64{500, 40}, [2]int64{900, 400}, [2]int64{10, 410}), off: 600,
			want: Translation{Class: Behind}, reason: "590 past the latest offset sync (source 10 at target 410)"},
		{name: "a repeated upstream offset keeps the latest target",
			syncs: syncsOf([2]int64{500, 40}, [2]int64{500, 45}), off: 500, want: Translation{Class: Exact, Target: 45}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.syncs.Translate(tc.off, 100)
			if !strings.Contains(got.Reason, tc.reason) || (tc.reason == "") != (got.Reason == "") {
				t.Errorf("reason %q, want one with %q", got.Reason, tc.reason)
			}
			got.Reason = ""
			if got != tc.want {
				t.Errorf("Translate(%d) = %+v, want %+v", tc.off, got, tc.want)
			}
			if got.Class.Blocked() != (tc.want.Class != Exact && tc.want.Class != RoundedDown) {
				t.Errorf("%s: Blocked() = %v", got.Class, got.Class.Blocked())
			}
		})
	}
}

// TestTranslateNeverSkips checks the rule on every offset of a replicated log with gaps: for
// each source offset the consumer has reached, the target position found never lies past the
// first target record whose source record it has not consumed, and the records it reads again
// are within MaxReread.
func TestTranslateNeverSkips(t *testing.T) {
	// Source 0..299; the records at source offsets divisible by 7 were not replicated (markers,
	// deletes); the others were written in order from target 0. MirrorMaker 2 syncs every 40
	// source records and wherever a gap changed the difference, which we simplify to every 40.
	var down []int64 // target offset of each source offset, -1 when not replicated
	next := int64(0)
	var syncs Syncs
	for u := range int64(300) {
		if u%7 == 0 {
			down = append(down, -1)
			continue
		}
		down = append(down, next)
		if u%40 == 1 {
			syncs.Add(OffsetSync{Topic: "t", Upstream: u, Downstream: next})
		}
		next++
	}
	for off := int64(1); off < 300; off++ {
		tr := syncs.Translate(off, 1000)
		if tr.Class.Blocked() {
			t.Fatalf("offset %d: %s (%s)", off, tr.Class, tr.Reason)
		}
		// The true position: the target offset of the first replicated source record at or
		// after off (the log end when none).
		pos := next
		for u := off; u < 300; u++ {
			if down[u] >= 0 {
				pos = down[u]
				break
			}
		}
		if tr.Target > pos {
			t.Fatalf("offset %d: target %d is past the true position %d: records skipped", off, tr.Target, pos)
		}
		if pos-tr.Target > tr.MaxReread {
			t.Fatalf("offset %d: %d records read again, MaxReread says %d", off, pos-tr.Target, tr.MaxReread)
		}
	}
}
