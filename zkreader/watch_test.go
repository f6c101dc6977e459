package zkreader

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// watchWait bounds how long a test waits for a watch to fire: a hang guard, not a speed check.
const watchWait = 30 * time.Second

// writeOffset sets one offset znode through the Reader's write side.
func writeOffset(t *testing.T, r *Reader, group, topic string, p int32, off int64) {
	t.Helper()
	if err := r.WriteOffsets(context.Background(), group, map[migrate.TopicPartition]int64{{Topic: topic, Partition: p}: off}); err != nil {
		t.Fatal(err)
	}
}

// changes collects what a Watch reports, and hands it new selections.
type changes struct {
	ch    chan string
	lists chan struct{} // GroupsChanged
	sel   chan []string
}

func (c changes) changed(g string) { c.ch <- g }

func (c changes) events() migrate.WatchEvents {
	return migrate.WatchEvents{Changed: c.changed, GroupsChanged: func() {
		select {
		case c.lists <- struct{}{}:
		default: // one pending report says it all
		}
	}}
}

// listed waits for a report that the list of groups changed.
func (c changes) listed(t *testing.T, after string) {
	t.Helper()
	select {
	case <-c.lists:
	case <-time.After(watchWait):
		t.Fatalf("after %s: no change of the groups list reported within %s", after, watchWait)
	}
}

// expect waits for a report of group g, skipping reports of other groups.
func (c changes) expect(t *testing.T, g, after string) {
	t.Helper()
	deadline := time.After(watchWait)
	for {
		select {
		case got := <-c.ch:
			if got == g {
				return
			}
		case <-deadline:
			t.Fatalf("after %s: no change of group %s reported within %s", after, g, watchWait)
		}
	}
}

// none checks that nothing is reported for a short while: a watch that should not fire.
func (c changes) none(t *testing.T, g string) {
	t.Helper()
	timeout := time.After(300 * time.Millisecond)
	for {
		select {
		case got := <-c.ch:
			if got == g {
				t.Fatalf("group %s reported changed, but nothing under it changed", g)
			}
		case <-timeout:
			return
		}
	}
}

// watchPaths are the watcher's two paths; the tests that hold for both run on each. oneShot
// forces the one-shot watches that servers before 3.6 get (Config.NoPersistentWatch).
var watchPaths = []struct {
	name    string
	oneShot bool
}{{"persistent", false}, {"one-shot", true}}

// openWatcherT opens a watcher (through dial when set) and checks that it took the path asked
// for: the persistent watch wherever the server serves addWatch, unless oneShot.
func openWatcherT(t *testing.T, cfg Config, oneShot bool, dial dialFunc) *Watcher {
	t.Helper()
	cfg.NoPersistentWatch = oneShot
	w, err := openWatcher(context.Background(), cfg, dial)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	hosts, _, err := ParseServers(cfg.Servers)
	if err != nil {
		t.Fatal(err)
	}
	want := !oneShot && detectReadPath(context.Background(), hosts, 5*time.Second, nil).multi
	if got := w.persistent.Load(); got != want {
		t.Fatalf("watcher on the persistent watch: %v, want %v", got, want)
	}
	return w
}

// forWatchPaths runs test once per path of the watcher.
func forWatchPaths(t *testing.T, test func(t *testing.T, oneShot bool)) {
	for _, p := range watchPaths {
		t.Run(p.name, func(t *testing.T) { test(t, p.oneShot) })
	}
}

func startWatch(t *testing.T, w *Watcher, groups ...string) changes {
	t.Helper()
	c := changes{ch: make(chan string, 1000), lists: make(chan struct{}, 1), sel: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	c.sel <- groups
	go func() { done <- w.Watch(ctx, c.sel, c.events()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	c.expectAll(t, groups, "the start")
	c.listed(t, "the start") // reported once the list is watched
	return c
}

// expectAll waits until every group was reported (once armed), whatever else is reported.
func (c changes) expectAll(t *testing.T, groups []string, after string) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < len(groups) {
		select {
		case g := <-c.ch:
			if slices.Contains(groups, g) {
				seen[g] = true
			}
		case <-time.After(watchWait):
			t.Fatalf("after %s: watches of %v not set within %s (reported: %v)", after, groups, watchWait, seen)
		}
	}
}

// TestWatcherNewGroups: a group created after the start is reported through the list, as soon
// as /consumers/<g> appears; once selected it is watched, its offsets tree too as it is created
// below it (folder by folder), and a group dropped from the selection is no longer reported.
func TestWatcherNewGroups(t *testing.T) { forWatchPaths(t, testWatcherNewGroups) }

func testWatcherNewGroups(t *testing.T, oneShot bool) {
	e := newEnv(t)
	r := openT(t, Config{Servers: e.servers()})
	w := openWatcherT(t, Config{Servers: e.servers()}, oneShot, nil)
	c := startWatch(t, w) // nothing selected yet
	e.create(t, "/consumers/late", "", zk.WorldACL(zk.PermAll))
	c.listed(t, "a group created")
	c.sel <- []string{"late"}
	c.expectAll(t, []string{"late"}, "the group selected")
	writeOffset(t, r, "late", "t", 0, 5) // creates offsets/, offsets/t/ and the znode
	c.expect(t, "late", "its first offset")
	writeOffset(t, r, "late", "t", 0, 6)
	c.expect(t, "late", "its offset set again")
	writeOffset(t, r, "another", "t", 0, 1)
	c.listed(t, "a second group created")
	c.sel <- []string{"another"} // late leaves the selection
	c.expectAll(t, []string{"another"}, "the second group selected")
	writeOffset(t, r, "late", "t", 0, 7)
	writeOffset(t, r, "another", "t", 0, 2)
	// ZooKeeper delivers the events in order: every report until another's is checked.
	for g := ""; g != "another"; {
		select {
		case g = <-c.ch:
			if g == "late" {
				t.Errorf("a group dropped from the selection was reported changed")
			}
		case <-time.After(watchWait):
			t.Fatalf("the change of the selected group was not reported within %s", watchWait)
		}
	}
}

// TestWatcher: every change the mirror must see fires, again and again (watches are one-shot
// and must be re-armed), and changes of other groups do not.
func TestWatcher(t *testing.T) { forWatchPaths(t, testWatcher) }

func testWatcher(t *testing.T, oneShot bool) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	set := func(g, topic string, p int32, off int64) { t.Helper(); writeOffset(t, r, g, topic, p, off) }
	set("g", "t", 0, 1)
	set("other", "t", 0, 1)
	w := openWatcherT(t, Config{Servers: e.servers()}, oneShot, nil)
	c := startWatch(t, w, "g", "absent")
	steps := []struct {
		name string
		do   func()
	}{
		{"an offset set", func() { set("g", "t", 0, 2) }},
		{"the same offset set again", func() { set("g", "t", 0, 3) }},
		{"a new partition", func() { set("g", "t", 1, 5) }},
		{"the new partition set", func() { set("g", "t", 1, 6) }},
		{"a new topic", func() { set("g", "u", 0, 7) }},
		{"the new topic's partition set", func() { set("g", "u", 0, 8) }},
		{"a group that did not exist gets offsets", func() { set("absent", "t", 0, 1) }},
		{"and they change", func() { set("absent", "t", 0, 2) }},
	}
	for _, s := range steps {
		s.do()
		g := "g"
		if s.name == "a group that did not exist gets offsets" || s.name == "and they change" {
			g = "absent"
		}
		c.expect(t, g, s.name)
	}
	set("other", "t", 0, 2)
	c.none(t, "other")
	cleanup, err := r.RegisterLiveConsumer(ctx, "g", "c1", []migrate.TopicPartition{{Topic: "t", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	c.expect(t, "g", "a legacy consumer registered")
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "g", "the legacy consumer left")
	set("g", "t", 0, 4)
	c.expect(t, "g", "an offset set after the liveness changes")
}

// cuttable is a dialer whose connections the test can cut, and whose dials fail while cut.
type cuttable struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cuttable) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError("cut by the test")}
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cuttable) setCut(cut bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = cut
	if cut {
		for _, c := range d.conns {
			c.Close() //nolint:errcheck // cutting: the error does not matter
		}
		d.conns = nil
	}
}

// TestWatcherSessionExpiry cuts the watcher's connection for longer than its session timeout,
// so ZooKeeper expires the session and every watch is lost: the watcher must report every group
// changed once a new session exists (a change made meanwhile is then read) and watch again.
func TestWatcherSessionExpiry(t *testing.T) { forWatchPaths(t, testWatcherSessionExpiry) }

func testWatcherSessionExpiry(t *testing.T, oneShot bool) {
	e := newEnv(t)
	r := openT(t, Config{Servers: e.servers()})
	set := func(off int64) { t.Helper(); writeOffset(t, r, "g", "t", 0, off) }
	set(1)
	d := &cuttable{}
	const timeout = 4 * time.Second // the server's minimum (2 x tickTime)
	w := openWatcherT(t, Config{Servers: e.servers(), SessionTimeout: timeout}, oneShot, d.dial)
	c := startWatch(t, w, "g")
	set(2)
	c.expect(t, "g", "a change before the cut")
	d.setCut(true)
	set(3)                  // missed by the watch: the session is cut
	time.Sleep(2 * timeout) // long enough for the server to expire the session; not an assertion
	d.setCut(false)
	c.expect(t, "g", "the session expired and came back")
	if n := w.Resets(); n < 1 {
		t.Errorf("the watches were never set again after the cut (resets %d): the session did not expire?", n)
	}
	if n := w.Expiries(); n != 1 {
		t.Errorf("session expiries counted %d, want 1 (the metric zk2kafka_dual_commit_zk_session_expiries_total)", n)
	}
	set(4)
	c.expect(t, "g", "a change after the new session")
	if added := w.added.Load(); !oneShot && added < 2 {
		t.Errorf("persistent watch added %d times, want at the start and again after the expiry", added)
	}
}

// TestWatcherReconnect cuts the watcher's connection for less than its session timeout: the
// session survives, and a change made while it was cut must still be reported. One-shot
// watches get it from the server (go-zookeeper's setWatches with its last zxid); the server
// replays nothing for the persistent watch, which must be added again and every group
// reported. A change after the reconnect shows the watch back.
func TestWatcherReconnect(t *testing.T) {
	forWatchPaths(t, func(t *testing.T, oneShot bool) { testWatcherReconnect(t, newEnv(t), oneShot) })
}

func testWatcherReconnect(t *testing.T, e *testEnv, oneShot bool) {
	r := openT(t, Config{Servers: e.servers()})
	set := func(g string, off int64) { t.Helper(); writeOffset(t, r, g, "t", 0, off) }
	set("g", 1)
	set("h", 1)
	d := &cuttable{}
	w := openWatcherT(t, Config{Servers: e.servers(), SessionTimeout: 20 * time.Second}, oneShot, d.dial)
	c := startWatch(t, w, "g", "h")
	added := w.added.Load()
	d.setCut(true)
	set("g", 2) // while the watcher has no connection
	d.setCut(false)
	c.expect(t, "g", "a change made while the connection was cut")
	set("h", 2)
	c.expect(t, "h", "a change after the reconnect")
	if n := w.Expiries(); n != 0 {
		t.Fatalf("the session expired (%d): not the plain reconnect under test", n)
	}
	if n := w.added.Load() - added; !oneShot && n < 1 {
		t.Errorf("persistent watch not added again after the reconnect")
	}
	if n := w.set.Load(); !oneShot && n != 0 {
		t.Errorf("%d one-shot watches set on the persistent path", n)
	}
}

// TestWatcherDeniedZnode: a znode the ACLs keep us from reading is left unwatched, and every
// other znode is still watched: it used to fail the arming, retried every 500 ms for good, and
// no group's change was reported until the mirror's next resync.
func TestWatcherDeniedZnode(t *testing.T) { forWatchPaths(t, testWatcherDeniedZnode) }

func testWatcherDeniedZnode(t *testing.T, oneShot bool) {
	e := newEnv(t)
	private := append(zk.DigestACL(zk.PermAll, adminUser, adminPass), zk.ACL{Perms: zk.PermAdmin, Scheme: "world", ID: "anyone"})
	e.create(t, "/consumers/g/offsets/t/0", "5", private)
	e.create(t, "/consumers/g/offsets/t/1", "5", zk.WorldACL(zk.PermAll))
	e.create(t, "/consumers/h/offsets/u", "", private) // a topic folder we cannot list
	e.create(t, "/consumers/h/offsets/t/0", "1", zk.WorldACL(zk.PermAll))
	r := openT(t, Config{Servers: e.servers()})
	w := openWatcherT(t, Config{Servers: e.servers()}, oneShot, nil)
	c := startWatch(t, w, "g", "h")
	for _, s := range []struct{ group, topic string }{{"h", "t"}, {"g", "t"}} {
		p := int32(0)
		if s.group == "g" {
			p = 1
		}
		writeOffset(t, r, s.group, s.topic, p, 9)
		c.expect(t, s.group, fmt.Sprintf("a readable offset of %s set beside a denied znode", s.group))
	}
}

// TestWatchSelectionSetsOnlyMissingWatches: a new selection (the mirror sends one when groups
// are created or deleted) sets on the server only the watches the session does not hold yet.
// go-zookeeper keeps one channel per watch set until it fires, so setting them all again each
// time grew without bound for quiet znodes (107 more per change here).
func TestWatchSelectionSetsOnlyMissingWatches(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	offs := map[migrate.TopicPartition]int64{}
	for p := range int32(100) {
		offs[migrate.TopicPartition{Topic: "t", Partition: p}] = 1
	}
	if err := r.WriteOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	w := openWatcherT(t, Config{Servers: e.servers()}, true, nil) // counts one-shot watches
	c := startWatch(t, w, "g", "new-0")
	counts := []int64{w.set.Load()}
	for i := 1; i < 4; i++ {
		groups := []string{"g", fmt.Sprintf("new-%d", i)}
		c.sel <- groups
		c.expectAll(t, groups[1:], fmt.Sprintf("selection %d", i))
		counts = append(counts, w.set.Load())
	}
	// The list (/consumers); g: offsets/ and t/ children, ids/ and owners/ exists (absent),
	// 100 data watches; each new group: exists watches on its three absent folders.
	want := []int64{1 + 104 + 3, 1 + 104 + 6, 1 + 104 + 9, 1 + 104 + 12}
	if !slices.Equal(counts, want) {
		t.Errorf("watches set after each of 4 selections: %v, want %v (g's set once)", counts, want)
	}
}

// TestWatchArmsBelowAWatchedDirectory: an arming cut short (a lost connection) may leave a
// directory's watch set and not yet its children's; the retry, which sets only what is missing,
// still goes down to them. Simulated by a set that holds the directories' watches only.
func TestWatchArmsBelowAWatchedDirectory(t *testing.T) {
	e := newEnv(t)
	r := openT(t, Config{Servers: e.servers()})
	set := func(off int64) { t.Helper(); writeOffset(t, r, "g", "t", 0, off) }
	set(1)
	w := openWatcherT(t, Config{Servers: e.servers()}, true, nil) // one-shot watches only
	for _, dir := range []string{"/consumers/g/offsets", "/consumers/g/offsets/t"} {
		w.armed[watchKey{w.r.path(dir), watchChildren}] = true
	}
	c := startWatch(t, w, "g")
	set(2)
	c.expect(t, "g", "an offset set below directories already watched")
}
