package mirror

import (
	"context"
	"fmt"
	"slices"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The mirror's selection follows ZooKeeper: a group created after the start that the filter
// matches is read, watched and mirrored as soon as the watcher reports the new list of groups
// (or, without a watcher, at the next resync); a group deleted leaves, and what the loop
// remembered of it is dropped. Rollovers are when groups appear: a group first seen five
// minutes late may already have been taken over by Kafka consumers that found no commit.

// selectGroups lists the legacy groups and selects as plan does (migrate.SelectGroups); Added
// and Removed are left for the loop to fill in.
func selectGroups(ctx context.Context, legacy migrate.LegacyStore, f migrate.Filter) (Selection, error) {
	sel, err := migrate.SelectGroups(ctx, legacy, f)
	if err != nil {
		return Selection{}, err
	}
	// Two legacy groups landing in one Kafka group would share its commits and its phase: refused
	// at the start, and a merge that appears later keeps the selection as it was (reported as
	// a failure to list the groups again, until the map or the groups change). A listed group
	// outside the selection counts too: "--group a --group-map a=k" beside a legacy group k
	// writes k's Kafka group from a's offsets while k's own consumers commit there.
	if err := f.GroupMap.CheckNoMerge(sel.Landing(f.GroupMap)); err != nil {
		return Selection{}, err
	}
	return Selection{Groups: sel.Groups, Missing: sel.Missing, Listed: sel.Listed}, nil
}

func (l *loop) takeRelist() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.relist
	l.relist = false
	return r
}

// reselect lists the groups again and applies the selection. full is a resync: every group is
// marked to be read again, and an empty selection is reported again (a warning for people).
// It returns false when the groups could not be listed.
func (l *loop) reselect(ctx context.Context, full bool) bool {
	sel, err := selectGroups(ctx, l.m.Legacy, l.m.Filter)
	if err != nil {
		what := "list the groups again"
		if full {
			what = "resync"
		} else {
			l.mu.Lock()
			l.relist = true // tried again at the next pass (the next poll at the latest)
			l.mu.Unlock()
		}
		l.syncFailed(l.groups, fmt.Errorf("%s: %w", what, err))
		return false
	}
	changed := l.apply(&sel)
	if changed || (full && len(sel.Groups) == 0) {
		l.m.Observer.SelectionChanged(sel)
	}
	if full {
		l.remark(sel.Groups)
		l.startResync()
	}
	return true
}

// apply makes sel the loop's selection, filling in what was added and removed, and reports
// whether it changed. Added groups are synced at once (the watcher reports them again once
// their watches are set); removed ones are forgotten.
func (l *loop) apply(sel *Selection) bool {
	sel.Added, sel.Removed = diffSorted(l.groups, sel.Groups)
	if len(sel.Added) == 0 && len(sel.Removed) == 0 {
		return false
	}
	l.groups = sel.Groups
	l.offerIfWatching(sel.Groups)
	for _, g := range sel.Removed {
		l.forget(g)
	}
	l.remark(sel.Added)
	return true
}

// selected says whether g is in the selection (l.groups is sorted).
func (l *loop) selected(g string) bool {
	_, ok := slices.BinarySearch(l.groups, g)
	return ok
}

func (l *loop) offerIfWatching(groups []string) {
	if l.m.Watcher != nil {
		l.offer(groups)
	}
}

// forget drops what the loop remembers of a group that left the selection.
func (l *loop) forget(g string) {
	delete(l.phase, g)
	delete(l.kafka, g)
	delete(l.keptAlive, g)
	delete(l.legacy, g)
	delete(l.failures, g)
	delete(l.retryAt, g)
	delete(l.unreachedGroups, g)
	delete(l.health.unsynced, g)
	l.mu.Lock()
	delete(l.dirty, g)
	l.mu.Unlock()
}

// diffSorted returns the names only in b (added) and only in a (removed); both are sorted.
func diffSorted(a, b []string) (added, removed []string) {
	for _, g := range b {
		if _, found := slices.BinarySearch(a, g); !found {
			added = append(added, g)
		}
	}
	for _, g := range a {
		if _, found := slices.BinarySearch(b, g); !found {
			removed = append(removed, g)
		}
	}
	return added, removed
}

// syncFailed reports a failure of whole groups; a resync under way is then not complete.
func (l *loop) syncFailed(groups []string, err error) {
	l.health.failed = true
	l.m.Observer.SyncFailed(groups, err)
}

func (l *loop) startResync() {
	l.health.resyncing, l.health.failed = true, false
}

// endPass ends a pass of the loop: a full resync whose reads all succeeded is recorded, and
// the heartbeat is reported.
func (l *loop) endPass() {
	if l.health.resyncing {
		if !l.health.failed {
			l.health.lastResync = l.m.Now()
		}
		l.health.resyncing = false
	}
	l.beat()
}

// beat reports the loop's state to the observer.
func (l *loop) beat() {
	l.mu.Lock()
	armed := l.armed
	l.mu.Unlock()
	l.m.Observer.LoopState(LoopState{Beat: l.m.Now(), Synced: len(l.health.unsynced) == 0, Armed: armed,
		LastResync: l.health.lastResync})
}
