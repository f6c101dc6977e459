package contract

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// WatcherSetup is one watcher under test and the legacy tree it watches.
type WatcherSetup struct {
	Watcher migrate.LegacyWatcher
	Legacy  Legacy
	// Expire, when set, makes the backend expire the watcher's session (every watch lost),
	// calls during while the session is gone, and returns once a new session may be had. Nil:
	// the backend cannot, and the session-expiry case is skipped.
	Expire func(t *testing.T, during func())
}

// LegacyWatcherHarness returns a watcher over a legacy tree of its own, empty (no
// /consumers), and the means to arrange that tree. It is called once per case.
type LegacyWatcherHarness func(t *testing.T) WatcherSetup

// TestLegacyWatcher runs the migrate.LegacyWatcher suite: one subtest per clause of the
// comments of LegacyWatcher.Watch and WatchEvents.
func TestLegacyWatcher(t *testing.T, h LegacyWatcherHarness) {
	cases := []struct {
		clause string
		run    func(t *testing.T, s WatcherSetup)
	}{
		{"each group of the first selection is reported once armed, existing or not", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "a", "t", 0, 1)
			s.Legacy.CreateGroup(t, "b")
			w := startWatch(t, s.Watcher, "a", "b", "absent")
			for _, g := range []string{"a", "b", "absent"} {
				w.rec.waitFor(t, 0, "the first selection's report of "+g, changed(g))
			}
		}},
		{"Armed(true) once the first selection's watches are set", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "a", "t", 0, 1)
			w := startWatch(t, s.Watcher, "a")
			w.rec.waitFor(t, 0, "Armed(true) at the start", armed(true))
			if ev := w.rec.since(0); slices.ContainsFunc(ev, armed(false)) {
				t.Errorf("Armed(false) reported at a start without failures: %v", ev)
			}
		}},
		{"GroupsChanged once the list of groups is watched", func(t *testing.T, s WatcherSetup) {
			w := startWatch(t, s.Watcher)
			w.rec.waitFor(t, 0, "GroupsChanged at the start", listChanged)
		}},
		{"every set of an offset is reported, again and again", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			w := startWatch(t, s.Watcher, "g")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			for off := int64(2); off <= 4; off++ {
				m := w.rec.mark()
				s.Legacy.SetOffset(t, "g", "t", 0, off)
				w.rec.waitFor(t, m, fmt.Sprintf("offset set to %d", off), changed("g"))
			}
		}},
		{"a new partition and a new topic are reported", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			w := startWatch(t, s.Watcher, "g")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			steps := []struct {
				what  string
				topic string
				p     int32
			}{{"a new partition", "t", 1}, {"that partition set", "t", 1}, {"a new topic", "u", 0}, {"the new topic's partition set", "u", 0}}
			for i, st := range steps {
				m := w.rec.mark()
				s.Legacy.SetOffset(t, "g", st.topic, st.p, int64(10+i))
				w.rec.waitFor(t, m, st.what, changed("g"))
			}
		}},
		{"a deleted offset znode is reported", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			s.Legacy.SetOffset(t, "g", "t", 1, 1)
			w := startWatch(t, s.Watcher, "g")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			m := w.rec.mark()
			s.Legacy.DeleteOffset(t, "g", "t", 1)
			w.rec.waitFor(t, m, "an offset znode deleted", changed("g"))
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "g", "t", 0, 2)
			w.rec.waitFor(t, m, "an offset set after the delete", changed("g"))
		}},
		{"a legacy consumer registering and leaving is reported", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			w := startWatch(t, s.Watcher, "g")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			m := w.rec.mark()
			leave := s.Legacy.Register(t, "g", "c1", tp("t", 0))
			w.rec.waitFor(t, m, "a legacy consumer registered", changed("g"))
			m = w.rec.mark()
			leave()
			w.rec.waitFor(t, m, "the legacy consumer left", changed("g"))
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "g", "t", 0, 2)
			w.rec.waitFor(t, m, "an offset set after the liveness changes", changed("g"))
		}},
		{"a group created or deleted is reported through GroupsChanged", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "old", "t", 0, 1)
			w := startWatch(t, s.Watcher) // nothing selected: the list is watched all the same
			w.rec.waitFor(t, 0, "the start", listChanged)
			m := w.rec.mark()
			s.Legacy.CreateGroup(t, "new")
			w.rec.waitFor(t, m, "a group created", listChanged)
			m = w.rec.mark()
			s.Legacy.DeleteGroup(t, "old")
			w.rec.waitFor(t, m, "a group deleted", listChanged)
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "newer", "t", 0, 1)
			w.rec.waitFor(t, m, "a group created with its first offset", listChanged)
		}},
		{"a group selected before it exists is reported as it gets offsets", func(t *testing.T, s WatcherSetup) {
			w := startWatch(t, s.Watcher, "later")
			w.rec.waitFor(t, 0, "the start", changed("later"))
			m := w.rec.mark()
			s.Legacy.SetOffset(t, "later", "t", 0, 1)
			w.rec.waitFor(t, m, "its first offset", changed("later"))
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "later", "t", 0, 2)
			w.rec.waitFor(t, m, "its offset set again", changed("later"))
		}},
		{"a later selection: new groups reported once armed, dropped ones no longer", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "a-dropped", "t", 0, 1)
			s.Legacy.SetOffset(t, "b-kept", "t", 0, 1)
			s.Legacy.SetOffset(t, "c-added", "t", 0, 1)
			w := startWatch(t, s.Watcher, "a-dropped", "b-kept")
			w.rec.waitFor(t, 0, "the start", changed("b-kept"))
			m := w.rec.mark()
			w.sel <- []string{"b-kept", "c-added"}
			w.rec.waitFor(t, m, "c-added selected", changed("c-added"))
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "c-added", "t", 0, 2)
			w.rec.waitFor(t, m, "an offset of the added group set", changed("c-added"))
			// Set the dropped group first: reports come in order, so a report of it would
			// come before the kept group's.
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "a-dropped", "t", 0, 2)
			s.Legacy.SetOffset(t, "b-kept", "t", 0, 2)
			w.rec.waitFor(t, m, "an offset of the kept group set", changed("b-kept"))
			if ev := w.rec.since(m); slices.ContainsFunc(ev, changed("a-dropped")) {
				t.Errorf("a group dropped from the selection was reported changed: %v", ev)
			}
		}},
		{"changes of groups not selected are not reported", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "a-other", "t", 0, 1)
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			w := startWatch(t, s.Watcher, "g")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			m := w.rec.mark()
			s.Legacy.SetOffset(t, "a-other", "t", 0, 2)
			s.Legacy.Register(t, "a-other", "c1")
			s.Legacy.SetOffset(t, "g", "t", 0, 2)
			w.rec.waitFor(t, m, "an offset of the selected group set", changed("g"))
			if ev := w.rec.since(0); slices.ContainsFunc(ev, changed("a-other")) {
				t.Errorf("a group never selected was reported changed: %v", ev)
			}
		}},
		{"after a session expiry: Armed(false), then Armed(true) and every group reported", func(t *testing.T, s WatcherSetup) {
			if s.Expire == nil {
				t.Skip("the backend cannot expire the watcher's session")
			}
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			s.Legacy.SetOffset(t, "h", "t", 0, 1)
			w := startWatch(t, s.Watcher, "g", "h")
			w.rec.waitFor(t, 0, "the start", changed("g"))
			w.rec.waitFor(t, 0, "the start", changed("h"))
			w.rec.waitFor(t, 0, "the start", armed(true))
			m := w.rec.mark()
			s.Expire(t, func() {
				s.Legacy.SetOffset(t, "g", "t", 0, 2) // while every watch is lost
				s.Legacy.CreateGroup(t, "new")
			})
			off := w.rec.waitFor(t, m, "Armed(false) at the expiry", armed(false))
			on := w.rec.waitFor(t, off+1, "Armed(true) once the watches are set again", armed(true))
			w.rec.waitFor(t, on, "g re-reported after the new session", changed("g"))
			w.rec.waitFor(t, on, "h re-reported after the new session", changed("h"))
			w.rec.waitFor(t, on, "GroupsChanged after the new session", listChanged)
			m = w.rec.mark()
			s.Legacy.SetOffset(t, "h", "t", 0, 3)
			w.rec.waitFor(t, m, "a change after the new session", changed("h"))
		}},
		{"Watch returns nil when ctx ends", func(t *testing.T, s WatcherSetup) {
			s.Legacy.SetOffset(t, "g", "t", 0, 1)
			rec := newRecorder()
			sel := make(chan []string, 1)
			sel <- []string{"g"}
			c, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Watcher.Watch(c, sel, rec.events()) }()
			rec.waitFor(t, 0, "the start", changed("g"))
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Watch returned %v when its context ended, want nil", err)
				}
			case <-time.After(wait):
				t.Fatalf("Watch did not return within %s of its context ending", wait)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) { c.run(t, h(t)) })
	}
}

// watching is one running Watch: what it reported, and the channel of its selections.
type watching struct {
	rec *recorder
	sel chan []string
}

// startWatch starts w.Watch with the first selection; the case's cleanup ends it and checks
// that it returned nil.
func startWatch(t *testing.T, w migrate.LegacyWatcher, first ...string) *watching {
	t.Helper()
	wt := &watching{rec: newRecorder(), sel: make(chan []string, 1)}
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	wt.sel <- first
	go func() { done <- w.Watch(c, wt.sel, wt.rec.events()) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Watch did not return within %s of its context ending", wait)
		}
	})
	return wt
}

// event is one callback of a Watch.
type event struct {
	kind  string // "changed", "groups-changed", "armed"
	group string
	armed bool
}

func (e event) String() string {
	switch e.kind {
	case "changed":
		return "Changed(" + e.group + ")"
	case "armed":
		return fmt.Sprintf("Armed(%v)", e.armed)
	}
	return "GroupsChanged"
}

func changed(g string) func(event) bool {
	return func(e event) bool { return e.kind == "changed" && e.group == g }
}

func armed(v bool) func(event) bool {
	return func(e event) bool { return e.kind == "armed" && e.armed == v }
}

func listChanged(e event) bool { return e.kind == "groups-changed" }

// recorder keeps every callback of a Watch in order. Callbacks must not block: they append
// under a lock and signal without waiting.
type recorder struct {
	mu     sync.Mutex
	log    []event
	signal chan struct{}
}

func newRecorder() *recorder { return &recorder{signal: make(chan struct{}, 1)} }

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *recorder) events() migrate.WatchEvents {
	return migrate.WatchEvents{
		Changed:       func(g string) { r.add(event{kind: "changed", group: g}) },
		GroupsChanged: func() { r.add(event{kind: "groups-changed"}) },
		Armed:         func(v bool) { r.add(event{kind: "armed", armed: v}) },
	}
}

// mark is the position of the next event: waits from it see only what comes after.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// since returns the events from position m on.
func (r *recorder) since(m int) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log[m:])
}

// waitFor waits until an event at position m or later matches and returns its position,
// failing the test after wait.
func (r *recorder) waitFor(t *testing.T, m int, after string, match func(event) bool) int {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		for i := m; i < len(r.log); i++ {
			if match(r.log[i]) {
				r.mu.Unlock()
				return i
			}
		}
		seen := slices.Clone(r.log[m:])
		r.mu.Unlock()
		select {
		case <-r.signal:
		case <-deadline:
			t.Fatalf("after %s: the expected report did not come within %s (reported since: %v)", after, wait, seen)
		}
	}
}
