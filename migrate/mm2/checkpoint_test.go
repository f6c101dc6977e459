package mm2

import "testing"

func TestWithCheckpoint(t *testing.T) {
	// What is left of the syncs after compaction: 1100->90 and 1300->280.
	syncs := syncsOf([2]int64{1100, 90}, [2]int64{1300, 280})
	cases := []struct {
		name string
		off  int64
		c    Checkpoint
		want Translation
	}{
		{name: "below the first sync: the group's checkpoint places it", off: 1050, c: Checkpoint{Upstream: 1040, Downstream: 38},
			want: Translation{Class: FromCheckpoint, Target: 38, MaxReread: 52}},
		{name: "the checkpoint of the offset itself", off: 1040, c: Checkpoint{Upstream: 1040, Downstream: 38},
			want: Translation{Class: FromCheckpoint, Target: 38, MaxReread: 52}},
		{name: "a checkpoint above the offset says nothing of it", off: 1039, c: Checkpoint{Upstream: 1040, Downstream: 38},
			want: syncs.Translate(1039, 100)},
		{name: "between syncs, higher than the rounding: taken, re-reads bounded by both", off: 1250, c: Checkpoint{Upstream: 1240, Downstream: 220},
			want: Translation{Class: FromCheckpoint, Target: 220, MaxReread: 60}},
		{name: "between syncs, lower than the rounding: the syncs' placement stays", off: 1250, c: Checkpoint{Upstream: 1100, Downstream: 80},
			want: Translation{Class: RoundedDown, Target: 91, MaxReread: 149}},
		{name: "a checkpoint past the next sync's target belongs to another replica", off: 1050, c: Checkpoint{Upstream: 1000, Downstream: 91},
			want: syncs.Translate(1050, 100)},
		{name: "exactly at the next sync's target: nothing to read again", off: 1050, c: Checkpoint{Upstream: 1000, Downstream: 90},
			want: Translation{Class: FromCheckpoint, Target: 90}},
		{name: "past the latest sync: no sync bounds the re-reads", off: 1310, c: Checkpoint{Upstream: 1305, Downstream: 285},
			want: syncs.Translate(1310, 100)},
		{name: "pinned by a sync: exact stays", off: 1100, c: Checkpoint{Upstream: 1090, Downstream: 85},
			want: Translation{Class: Exact, Target: 90}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := syncs.WithCheckpoint(syncs.Translate(tc.off, 100), tc.off, tc.c)
			if got != tc.want {
				t.Errorf("WithCheckpoint(%d, %+v) = %+v, want %+v", tc.off, tc.c, got, tc.want)
			}
		})
	}
	if got := (Syncs{}).WithCheckpoint((Syncs{}).Translate(5, 100), 5, Checkpoint{Upstream: 1, Downstream: 1}); got.Class != NoSync {
		t.Errorf("no syncs at all: %+v, want no-sync: a checkpoint alone is not trusted", got)
	}
}

// A checkpoint MirrorMaker 2 computed from the whole sync history, used after compaction left
// only a few syncs, never places an offset past a record the consumer has not read, and re-reads
// at most what it announces; a checkpoint of a replica made again since is never used.
func TestWithCheckpointNeverSkips(t *testing.T) {
	// Source 0..399; source offsets divisible by 5 were not replicated; the rest were written
	// in order from target 0, and synced every 10 source records.
	var down []int64
	next := int64(0)
	var all []OffsetSync
	for u := range int64(400) {
		if u%5 == 0 {
			down = append(down, -1)
			continue
		}
		down = append(down, next)
		if u%10 == 1 {
			all = append(all, OffsetSync{Topic: "t", Upstream: u, Downstream: next})
		}
		next++
	}
	var full Syncs
	for _, s := range all {
		full.Add(s)
	}
	// Compaction left the sync at 251 and the ones from 381 on.
	var left Syncs
	for _, s := range all {
		if s.Upstream == 251 || s.Upstream >= 381 {
			left.Add(s)
		}
	}
	pos := func(off int64) int64 {
		for u := off; u < 400; u++ {
			if down[u] >= 0 {
				return down[u]
			}
		}
		return next
	}
	used := 0
	for cu := int64(1); cu < 400; cu += 3 {
		ct := full.Translate(cu, 1000)
		if ct.Class.Blocked() {
			continue
		}
		c := Checkpoint{Upstream: cu, Downstream: ct.Target}
		for off := cu; off < 400; off++ {
			tr := left.WithCheckpoint(left.Translate(off, 1000), off, c)
			if tr.Class.Blocked() {
				continue
			}
			if tr.Class == FromCheckpoint {
				used++
			}
			if p := pos(off); tr.Target > p || p-tr.Target > tr.MaxReread {
				t.Fatalf("checkpoint %+v, offset %d: %s at %d, true position %d, %d announced", c, off, tr.Class, tr.Target, p, tr.MaxReread)
			}
		}
	}
	if used == 0 {
		t.Fatal("no offset was placed from a checkpoint: the test proves nothing")
	}
	// The target's replica made again: replication went on from source 300 at target 0.
	var again Syncs
	again.Add(OffsetSync{Topic: "t", Upstream: 300, Downstream: 0})
	again.Add(OffsetSync{Topic: "t", Upstream: 350, Downstream: 40})
	old := Checkpoint{Upstream: 100, Downstream: 79} // of the old replica
	for off := int64(100); off < 300; off++ {
		if tr := again.WithCheckpoint(again.Translate(off, 1000), off, old); !tr.Class.Blocked() {
			t.Fatalf("offset %d placed at %d from a checkpoint of the replica before it was made again", off, tr.Target)
		}
	}
}
