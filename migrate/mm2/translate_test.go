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
		{name: "a target partition started again forgets the syncs before (the replica re-created)",
			syncs: syncsOf([2]int64{100, 100}, [2]int64{200, 200}, [2]int64{250, 10}), off: 220,
			want: Translation{Class: BelowFirstSync}, reason: "below the first offset sync left (source 250 at target 10)"},
		{name: "the same, an offset at a forgotten sync",
			syncs: syncsOf([2]int64{100, 100}, [2]int64{200, 200}, [2]int64{250, 10}), off: 200,
			want: Translation{Class: BelowFirstSync}, reason: "source 250 at target 10"},
		{name: "the same, past the new sync",
			syncs: syncsOf([2]int64{100, 100}, [2]int64{200, 200}, [2]int64{250, 10}), off: 260,
			want: Translation{Class: RoundedDown, Target: 11, MaxReread: 9}},
		{name: "a repeated upstream offset at a lower target starts again too",
			syncs: syncsOf([2]int64{100, 100}, [2]int64{200, 200}, [2]int64{200, 5}), off: 150,
			want: Translation{Class: BelowFirstSync}, reason: "source 200 at target 5"},
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

// Past the latest sync by more than offset.lag.max, an offset is placed once the target holds
// as many records after the sync as there are source offsets before it, and stays behind
// otherwise; other offsets translate as Translate does.
func TestTranslateReplicated(t *testing.T) {
	syncs := syncsOf([2]int64{1000, 0}, [2]int64{1300, 280})
	cases := []struct {
		name      string
		off, end  int64
		want      Translation
		reasonHas string
	}{
		{name: "the target holds every record before it", off: 1401, end: 381, want: Translation{Class: RoundedDown, Target: 281, MaxReread: 100}},
		{name: "the target holds more", off: 1401, end: 500, want: Translation{Class: RoundedDown, Target: 281, MaxReread: 100}},
		{name: "one record short", off: 1401, end: 380, want: Translation{Class: Behind}, reasonHas: "more than offset.lag.max"},
		{name: "within offset.lag.max: as Translate", off: 1350, end: 281, want: Translation{Class: RoundedDown, Target: 281, MaxReread: 49}},
		{name: "below the first sync: as Translate", off: 999, end: 5000, want: Translation{Class: BelowFirstSync}, reasonHas: "below the first"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := syncs.TranslateReplicated(tc.off, 100, tc.end)
			if !strings.Contains(got.Reason, tc.reasonHas) || (tc.reasonHas == "") != (got.Reason == "") {
				t.Errorf("reason %q, want one with %q", got.Reason, tc.reasonHas)
			}
			got.Reason = ""
			if got != tc.want {
				t.Errorf("TranslateReplicated(%d, end %d) = %+v, want %+v", tc.off, tc.end, got, tc.want)
			}
		})
	}
	var none Syncs
	if got := none.TranslateReplicated(5, 100, 1000); got.Class != NoSync {
		t.Errorf("no syncs: %+v, want no-sync", got)
	}
}

// TranslateReplicated never skips either, at every stage of a replication whose syncs stopped
// early: the source's records 0..299 (those at multiples of 7 never replicated), synced every
// 40 up to 121 only, replicated up to each source offset in turn. A placed offset is never past
// the position of its record in the final target log, re-reads at most MaxReread, and is placed
// further past the latest sync than offset.lag.max only once every record before it is in the
// target.
func TestTranslateReplicatedNeverSkips(t *testing.T) {
	var down []int64
	next := int64(0)
	var syncs Syncs
	for u := range int64(300) {
		if u%7 == 0 {
			down = append(down, -1)
			continue
		}
		down = append(down, next)
		if u%40 == 1 && u <= 121 {
			syncs.Add(OffsetSync{Topic: "t", Upstream: u, Downstream: next})
		}
		next++
	}
	for replicated := int64(121); replicated < 300; replicated++ { // source records up to this one are in the target
		end := int64(0)
		for u := int64(0); u <= replicated; u++ {
			if down[u] >= 0 {
				end = down[u] + 1
			}
		}
		for off := int64(122); off < 300; off++ {
			tr := syncs.TranslateReplicated(off, 5, end)
			if tr.Class.Blocked() {
				continue
			}
			pos := next
			for u := off; u < 300; u++ {
				if down[u] >= 0 {
					pos = down[u]
					break
				}
			}
			switch {
			case tr.Target > pos:
				t.Fatalf("replicated to %d, offset %d: target %d is past the true position %d", replicated, off, tr.Target, pos)
			case pos-tr.Target > tr.MaxReread:
				t.Fatalf("replicated to %d, offset %d: %d records read again, MaxReread says %d", replicated, off, pos-tr.Target, tr.MaxReread)
			case off-121 > 5 && off-1 > replicated: // within offset.lag.max, Translate places it as MirrorMaker 2 would
				t.Fatalf("replicated to %d, offset %d placed: record %d is not in the target yet", replicated, off, off-1)
			}
		}
	}
}
