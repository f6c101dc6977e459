package mirror_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestMirrorWaitsForNamedGroup: a group named with --group that is not in ZooKeeper yet is
// reported missing (the CLI warns), and mirrored as soon as it appears.
func TestMirrorWaitsForNamedGroup(t *testing.T) {
	f := newFixture()
	f.legacy.SetOffset("g", "t", 0, 10)
	var err error
	if f.m.Filter, err = migrate.NewFilter([]string{"later"}, "", "", ""); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	if sel := f.obs.nextSelection(t); len(sel.Groups) != 0 || !slices.Equal(sel.Missing, []string{"later"}) {
		t.Fatalf("selection at start %+v, want none selected and later missing", sel)
	}
	f.legacy.SetOffset("later", "t", 0, 7)
	f.watch.fireList(t)
	if sel := f.obs.nextSelection(t); !slices.Equal(sel.Added, []string{"later"}) || len(sel.Missing) != 0 {
		t.Fatalf("selection after the group appeared %+v, want later added", sel)
	}
	if s := f.obs.next(t, "later"); writes(s, mirror.ReasonMirror)["t/0"].To != 7 {
		t.Errorf("group that appeared: %+v, want t/0 mirrored at 7", s.Writes)
	}
}

// TestMirrorRelistRetried: a listing that fails after the list of groups changed is tried again
// at the next pass, not left to the resync minutes later.
func TestMirrorRelistRetried(t *testing.T) {
	f := newFixture()
	f.m.PollInterval = time.Millisecond
	f.legacy.SetOffset("g1", "t", 0, 10)
	f.start(t)
	f.nextSelectionIs(t, []string{"g1"})
	f.legacy.FailList(errors.New("connection loss"))
	f.legacy.SetOffset("g2", "t", 0, 20)
	f.watch.fireList(t)
	select {
	case <-f.obs.failed:
	case <-time.After(waitFor):
		t.Fatal("the failed listing was not reported")
	}
	f.legacy.FailList(nil)
	f.nextSelectionIs(t, []string{"g1", "g2"})
}

// TestMirrorFollowsTheListOfGroups: a group created after the start is mirrored as soon as the
// watcher reports the list changed, long before any resync; a group deleted leaves the
// selection and the loop's state.
func TestMirrorFollowsTheListOfGroups(t *testing.T) {
	f := newFixture() // resync and poll intervals of hours: only the watcher can bring g2 in
	var err error
	if f.m.Filter, err = migrate.NewFilter(nil, "^g", "", ""); err != nil {
		t.Fatal(err)
	}
	f.legacy.SetOffset("g1", "t", 0, 10)
	f.start(t)
	if sel := f.obs.nextSelection(t); !slices.Equal(sel.Groups, []string{"g1"}) {
		t.Fatalf("selection at start %+v, want [g1]", sel)
	}
	f.obs.next(t, "g1")
	f.legacy.SetOffset("g2", "t", 0, 20)
	f.legacy.SetOffset("other", "t", 0, 30)
	f.watch.fireList(t)
	sel := f.obs.nextSelection(t)
	if !slices.Equal(sel.Groups, []string{"g1", "g2"}) || !slices.Equal(sel.Added, []string{"g2"}) || len(sel.Removed) != 0 {
		t.Fatalf("selection after g2 was created %+v, want g2 added", sel)
	}
	if s := f.obs.next(t, "g2"); writes(s, mirror.ReasonMirror)["t/0"].To != 20 {
		t.Errorf("new group: %+v, want t/0 mirrored at 20", s.Writes)
	}
	waitUntil(t, "the watcher was given [g1 g2]", func() bool {
		calls := f.watch.watched()
		return len(calls) == 2 && slices.Equal(calls[1], []string{"g1", "g2"})
	})
	f.legacy.DeleteGroup("g1")
	f.watch.fireList(t)
	if sel := f.obs.nextSelection(t); !slices.Equal(sel.Removed, []string{"g1"}) || !slices.Equal(sel.Groups, []string{"g2"}) {
		t.Fatalf("selection after g1 was deleted %+v, want g1 removed", sel)
	}
	// A report about g1 that arrives late (the watcher still arming its deleted znodes) does not
	// bring it back: g2's sync, fired after it, comes with no g1 sync before it.
	f.watch.fire(t, "g1")
	f.legacy.SetOffset("g2", "t", 0, 21)
	f.watch.fire(t, "g2")
	for {
		s := f.obs.nextAny(t)
		if s.Group == "g1" {
			t.Fatalf("a group that left the selection was synced again: %+v", s)
		}
		if s.Group == "g2" && writes(s, mirror.ReasonMirror)["t/0"].To == 21 {
			break
		}
	}
	if got := kafkaOffsets(t, f.kafka, "other"); len(got) != 0 {
		t.Errorf("a group outside the selection was mirrored: %v", got)
	}
}

// TestMirrorResyncWatchesNewGroups: a group created after the start that the selection matches
// is mirrored at the next resync, and watched from then on.
func TestMirrorResyncWatchesNewGroups(t *testing.T) {
	// On synctest's clock: the resync is due a minute after the first pass ended, whenever the
	// test's goroutine gets to move the clock (a fake clock moved by hand could move before the
	// loop recorded that pass, and put the resync off for good).
	synctest.Test(t, func(t *testing.T) {
		f := newFixture() // the mirror's clock and ticker are the bubble's
		f.m.PollInterval = 10 * time.Second
		f.m.ResyncInterval = time.Minute
		var err error
		if f.m.Filter, err = migrate.NewFilter(nil, "^g", "", ""); err != nil {
			t.Fatal(err)
		}
		f.legacy.SetOffset("g1", "t", 0, 10)
		f.start(t)
		f.obs.next(t, "g1")
		f.legacy.SetOffset("g2", "t", 0, 20)
		f.legacy.SetOffset("other", "t", 0, 30)
		time.Sleep(time.Minute + 5*time.Second) // past the poll at 1m, the resync
		synctest.Wait()
		if s := f.obs.next(t, "g2"); writes(s, mirror.ReasonMirror)["t/0"].To != 20 {
			t.Errorf("new group at resync: %+v, want t/0 mirrored at 20", s.Writes)
		}
		if calls := f.watch.watched(); len(calls) != 2 || !slices.Equal(calls[1], []string{"g1", "g2"}) {
			t.Fatalf("the watcher was given %v, want [g1] then [g1 g2]", calls)
		}
		f.legacy.SetOffset("g2", "t", 0, 21)
		f.watch.fire(t, "g2")
		for {
			if s := f.obs.next(t, "g2"); writes(s, mirror.ReasonMirror)["t/0"].To == 21 {
				break
			}
		}
		if got := kafkaOffsets(t, f.kafka, "other"); len(got) != 0 {
			t.Errorf("a group outside the selection was mirrored: %v", got)
		}
	})
}

// TestMirrorRefusesAMergeWithAGroupOutsideItsSelection: mapping a selected group onto the Kafka
// group of a legacy group left out of the selection would mirror two legacy groups into one
// Kafka group (one's consumers would skip what the other had not read): refused at the start,
// nothing written.
func TestMirrorRefusesAMergeWithAGroupOutsideItsSelection(t *testing.T) {
	f := newFixture()
	f.legacy.SetOffset("a", "t", 0, 10)
	f.legacy.SetOffset("k", "t", 0, 5)
	flt, err := migrate.NewFilter([]string{"a"}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	flt.GroupMap = migrate.GroupMap{"a": "k"}
	f.m.Filter = flt
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.kafka.OnCommit(func(string) { cancel() }) // a mirror that went ahead ends at its first commit
	err = f.m.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), `all land in Kafka group "k"`) {
		t.Fatalf("Run: %v, want the merge of a and k refused", err)
	}
	if c := f.kafka.Commits(); len(c) != 0 {
		t.Fatalf("commits %+v after a refused start", c)
	}
}
