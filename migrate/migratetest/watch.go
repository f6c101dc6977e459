package migratetest

import (
	"context"
	"sync"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Watcher is an in-memory migrate.LegacyWatcher over a LegacyStore: every change made through
// the store (its setters, AdvanceOffsets, WriteOffsets) is reported as ZooKeeper's watches
// report it: Changed for a selected group, GroupsChanged when a group is created or deleted.
// Get one from (*LegacyStore).Watcher; it is safe for concurrent use.
type Watcher struct {
	s    *LegacyStore
	mu   sync.Mutex
	runs map[*watchRun]bool
}

var _ migrate.LegacyWatcher = (*Watcher)(nil)

// Watcher returns a watcher of the store's changes.
func (s *LegacyStore) Watcher() *Watcher { return &Watcher{s: s, runs: map[*watchRun]bool{}} }

// watchRun is one Watch call. Its callbacks are made under mu, so a selection and the
// changes reported around it are in one order: a change made after a group was reported
// armed is reported after that.
type watchRun struct {
	mu     sync.Mutex
	ev     migrate.WatchEvents
	groups map[string]bool
	lost   bool // the session is expired: nothing is reported until it is back
}

// Watch implements migrate.LegacyWatcher as zkreader.Watcher does: once the first selection
// is received the list and the selected groups are watched, Armed(true), GroupsChanged and a
// Changed for each selected group are reported; later selections report their new groups.
func (w *Watcher) Watch(ctx context.Context, selections <-chan []string, ev migrate.WatchEvents) error {
	run := &watchRun{ev: ev, groups: map[string]bool{}}
	var first []string
	select {
	case <-ctx.Done():
		return nil
	case first = <-selections:
	}
	w.mu.Lock()
	w.runs[run] = true
	w.mu.Unlock()
	w.s.mu.Lock()
	w.s.watchers[run] = true
	w.s.mu.Unlock()
	defer func() {
		w.s.mu.Lock()
		delete(w.s.watchers, run)
		w.s.mu.Unlock()
		w.mu.Lock()
		delete(w.runs, run)
		w.mu.Unlock()
	}()
	run.mu.Lock()
	run.selectLocked(first)
	run.armedLocked(true)
	run.listLocked() // a group created before the list was watched is then listed
	run.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return nil
		case sel := <-selections:
			run.mu.Lock()
			run.selectLocked(sel)
			run.mu.Unlock()
		}
	}
}

// ExpireSession models a ZooKeeper session expiry of the watcher: every running Watch reports
// Armed(false) and nothing more while during runs (its changes are missed, as the real
// watches are lost), then Armed(true), GroupsChanged and a Changed for every selected group,
// as once the watches are set again on a new session.
func (w *Watcher) ExpireSession(during func()) {
	w.mu.Lock()
	var runs []*watchRun
	for r := range w.runs {
		runs = append(runs, r)
	}
	w.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		r.lost = true
		r.armedLocked(false)
		r.mu.Unlock()
	}
	if during != nil {
		during()
	}
	for _, r := range runs {
		r.mu.Lock()
		r.lost = false
		r.armedLocked(true)
		r.listLocked()
		for g := range r.groups {
			r.changedLocked(g)
		}
		r.mu.Unlock()
	}
}

// selectLocked makes groups the selection and reports the new ones changed.
func (r *watchRun) selectLocked(groups []string) {
	next := make(map[string]bool, len(groups))
	for _, g := range groups {
		next[g] = true
		if !r.groups[g] {
			r.changedLocked(g)
		}
	}
	r.groups = next
}

func (r *watchRun) changedLocked(g string) {
	if r.ev.Changed != nil {
		r.ev.Changed(g)
	}
}

func (r *watchRun) listLocked() {
	if r.ev.GroupsChanged != nil {
		r.ev.GroupsChanged()
	}
}

func (r *watchRun) armedLocked(ok bool) {
	if r.ev.Armed != nil {
		r.ev.Armed(ok)
	}
}

// report tells the run that group changed, and the list of groups too when list is set.
func (r *watchRun) report(group string, list bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost {
		return
	}
	if list {
		r.listLocked()
	}
	if r.groups[group] {
		r.changedLocked(group)
	}
}

// notify reports a change of group (and of the list of groups, when list is set) to every
// running Watch. It is called without s.mu held: the callbacks are the caller's.
func (s *LegacyStore) notify(group string, list bool) {
	s.mu.Lock()
	runs := make([]*watchRun, 0, len(s.watchers))
	for r := range s.watchers {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.report(group, list)
	}
}
