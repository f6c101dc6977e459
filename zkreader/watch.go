package zkreader

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Watcher watches the legacy znodes of groups on a ZooKeeper session of its own and tells the
// mirror what changed (migrate.LegacyWatcher). On ZooKeeper 3.6+ (every server, as the reads'
// multiRead) one persistent recursive watch on /consumers sees everything (addwatch.go).
// Before 3.6 watches are one-shot and there are no recursive ones: each fired watch is
// re-armed before the change is reported, so a change made after the mirror's re-read fires
// again. Close it when done.
type Watcher struct {
	r *Reader // one connection: watches belong to the session that set them

	// persistent: the fast path, one persistent recursive watch (addwatch.go); false: one-shot
	// watches per folder and znode (watch_set.go). Chosen at open from the servers' versions;
	// a server that refuses addWatch turns it off for good.
	persistent atomic.Bool
	added      atomic.Int64 // persistent watches added (at the start, after reconnects and expiries), for tests

	mu      sync.Mutex // guards the fields below, filled by go-zookeeper's callback
	pending []zk.Event
	signal  chan struct{}

	// armed is every watch the session holds, kept across Watch calls and cleared only when
	// the session's watches are lost (expiry). go-zookeeper keeps one channel per watch set and
	// frees it only when the watch fires: setting again a watch still held (a Watch restarted
	// for a new selection, a retry after an error) added one for every quiet znode each time.
	armedMu sync.Mutex
	armed   map[watchKey]bool
	denied  map[string]bool // znodes the ACLs keep us from watching, logged once each
	set     atomic.Int64    // watches set on the server (ChildrenW, ExistsW, GetW), for tests

	resets   atomic.Int64
	expiries atomic.Int64

	lease atomic.Pointer[Lease] // gets the session's events (lease.go); nil: none

	// storm, when set, is the storm-kafka spout whose znodes are watched instead of
	// /consumers (storm_watch.go).
	storm *StormLayout
}

// Expiries is how many times the watcher's session expired (every watch lost).
func (w *Watcher) Expiries() int64 { return w.expiries.Load() }

// Resets is how many times every watch had to be set again after they were lost (session expiry).
func (w *Watcher) Resets() int64 { return w.resets.Load() }

var _ migrate.LegacyWatcher = (*Watcher)(nil)

// OpenWatcher opens the watcher's own session (cfg.Connections is ignored: one connection).
func OpenWatcher(ctx context.Context, cfg Config) (*Watcher, error) {
	return openWatcher(ctx, cfg, nil)
}

// dialFunc is a network dialer under the session's own (side channel, handshake); tests pass
// one that can cut the connection.
type dialFunc func(network, addr string, timeout time.Duration) (net.Conn, error)

func openWatcher(ctx context.Context, cfg Config, dial dialFunc) (*Watcher, error) {
	cfg, r, scheme, auth, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	log := r.log
	// The versions are asked while the session starts, as Open does.
	detected := make(chan readPath, 1)
	dctx, cancelDetect := context.WithCancel(ctx)
	defer cancelDetect()
	go func() { detected <- detectReadPath(dctx, r.hosts, min(cfg.SessionTimeout, 5*time.Second), r.tls) }()
	w := &Watcher{signal: make(chan struct{}, 1), r: r, armed: map[watchKey]bool{}, denied: map[string]bool{}}
	s := &session{ready: make(chan struct{}), log: log.With("zk_conn", "watch"), maxWait: cfg.SessionTimeout, check: r.check, tls: r.tls,
		netDial: dial}
	c, _, err := zk.Connect(r.hosts, cfg.SessionTimeout,
		zk.WithEventCallback(func(ev zk.Event) { s.event(ev); w.event(ev); w.leaseEvent(ev) }),
		zk.WithDialer(s.dial), zk.WithLogger(s), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("zookeeper %s: %w", w.r.servers(), err)
	}
	w.r.conns, w.r.sessions = []*zk.Conn{c}, []*session{s}
	if err := w.r.waitSessions(ctx, cfg.SessionTimeout, []*session{s}, scheme, auth); err != nil {
		w.r.Close()
		return nil, err
	}
	path := <-detected
	cfg = cfg.sizedFor(path.multi)
	cfg.GroupsInFlight = 1
	w.r.limit(cfg)
	if cfg.NoPersistentWatch {
		path = readPath{reason: "persistent watches turned off (Config.NoPersistentWatch)"}
	}
	w.persistent.Store(path.multi)
	log.Debug("zookeeper watcher connected", "persistent_watch", path.multi, "why", path.reason)
	return w, nil
}

// Close ends the watcher's session.
func (w *Watcher) Close() { w.r.Close() }

// event is go-zookeeper's callback: it must not block (it runs under the client's own locks).
func (w *Watcher) event(ev zk.Event) {
	w.mu.Lock()
	w.pending = append(w.pending, ev)
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *Watcher) take() []zk.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	evs := w.pending
	w.pending = nil
	return evs
}

// watchKind is the kind of one ZooKeeper watch; a znode may carry several.
type watchKind int

const (
	watchData watchKind = iota
	watchChildren
	watchExists
)

type watchKey struct {
	path string
	kind watchKind
}

// firedKinds are the watches a server event consumes (as go-zookeeper's notifyWatches).
func firedKinds(t zk.EventType) []watchKind {
	switch t {
	case zk.EventNodeCreated:
		return []watchKind{watchExists}
	case zk.EventNodeDataChanged:
		return []watchKind{watchExists, watchData}
	case zk.EventNodeChildrenChanged:
		return []watchKind{watchChildren}
	case zk.EventNodeDeleted:
		return []watchKind{watchExists, watchData, watchChildren}
	}
	return nil
}

// watchRun is one Watch call: the groups it reports.
type watchRun struct {
	w      *Watcher
	groups map[string]bool
	ev     migrate.WatchEvents
}

// retryArm is how long to wait before arming again after ZooKeeper failed (connection lost).
const retryArm = 500 * time.Millisecond

// Watch implements migrate.LegacyWatcher. The list of groups (/consumers) is watched from the
// start; each selection's groups are armed as they come. After a session expiry every watch is
// gone: they are all set again once a new session exists, every group is reported changed and
// the list too, so the mirror re-reads them. A plain reconnect keeps the one-shot watches
// (go-zookeeper sets them again itself, and the server fires those whose znode changed
// meanwhile); the persistent watch of the fast path is added again on the new connection and,
// as the server replays nothing for it, every group and the list are reported changed.
func (w *Watcher) Watch(ctx context.Context, selections <-chan []string, ev migrate.WatchEvents) error {
	run := &watchRun{w: w, groups: map[string]bool{}, ev: ev}
	var first []string
	select {
	case <-ctx.Done():
		return nil
	case first = <-selections:
	}
	// The list first: a group created while the selection's watches are set is then seen. The
	// selection is taken whatever happens (select_ records it before arming), so a failure here
	// is made good by the retry's armAll.
	rearmAll := run.armList(ctx) != nil
	rearmAll = run.select_(ctx, first) != nil || rearmAll
	run.armed(!rearmAll)
	if !rearmAll {
		run.listChanged() // created between the mirror's listing and the list watch
	}
	var (
		retry <-chan time.Time
		lost  watchLost
	)
	for {
		if rearmAll && retry == nil {
			retry = time.After(retryArm)
		}
		select {
		case <-ctx.Done():
			return nil
		case sel := <-selections:
			if err := run.select_(ctx, sel); err != nil && !rearmAll {
				w.r.log.Warn("zookeeper watches of new groups not set, setting what is missing", "err", err)
				rearmAll = true
				run.armed(false)
			}
			continue
		case <-retry:
			retry = nil
			// Only what is missing is set: watches set before the failure are still held
			// (a reconnect keeps them; an expiry has cleared the set).
			if err := run.armAll(ctx); err != nil {
				w.r.log.Warn("zookeeper watches not set yet, retrying", "err", err)
				continue
			}
			// Set on the live connection: a disconnect seen before is made good by it.
			rearmAll, lost = false, watchLost{}
			w.resets.Add(1)
			run.armed(true)
			run.reportAll()
			continue
		case <-w.signal:
		}
		rearmAll = run.handle(ctx, w.take(), &lost, rearmAll)
	}
}

// select_ makes groups the selection: the new ones are armed, then reported changed (a change
// between the mirror's read and the arming is then read); the others are no longer reported.
// A name ZooKeeper could not hold is left out, with a warning.
func (run *watchRun) select_(ctx context.Context, groups []string) error {
	next := make(map[string]bool, len(groups))
	var added []string
	for _, g := range groups {
		if err := ValidateName(g); err != nil {
			run.w.r.log.Warn("group not watched: its name is not a ZooKeeper path component", "group", g, "err", err)
			continue
		}
		next[g] = true
		if !run.groups[g] {
			added = append(added, g)
		}
	}
	run.groups = next
	if err := run.armGroups(ctx, added); err != nil {
		return err
	}
	for _, g := range added {
		run.changed(g)
	}
	return nil
}

func (run *watchRun) names() []string { return slices.Sorted(maps.Keys(run.groups)) }

// armAll sets every missing watch: the list's and each selected group's.
func (run *watchRun) armAll(ctx context.Context) error {
	if err := run.armList(ctx); err != nil {
		return err
	}
	return run.armGroups(ctx, run.names())
}

func (run *watchRun) changed(g string) {
	if run.ev.Changed != nil {
		run.ev.Changed(g)
	}
}

func (run *watchRun) listChanged() {
	if run.ev.GroupsChanged != nil {
		run.ev.GroupsChanged()
	}
}

func (run *watchRun) armed(ok bool) {
	if run.ev.Armed != nil {
		run.ev.Armed(ok)
	}
}
