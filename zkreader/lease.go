package zkreader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LeaseDir is the folder of dual-commit's lease znodes, below the chroot.
const LeaseDir = "/zk2kafka/dual-commit"

// LeaseOwner is what an instance writes into its lease znode (JSON): who it is, for the
// operator and for the instances waiting behind it, and which groups it writes.
type LeaseOwner struct {
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Start time.Time `json:"start"`
	// Groups is the instance's explicit group list. Empty when it selects groups by a regular
	// expression, or all of them: it may then meet any group, one created later too.
	Groups []string `json:"groups,omitempty"`
	// Selection is the selection as the operator gave it, for people.
	Selection string `json:"selection,omitempty"`
}

func (o LeaseOwner) String() string {
	return fmt.Sprintf("host %s pid %d started %s", o.Host, o.PID, o.Start.Format(time.RFC3339))
}

// overlaps is false only when both selections are explicit group lists with no common name.
func (o LeaseOwner) overlaps(p LeaseOwner) bool {
	if len(o.Groups) == 0 || len(p.Groups) == 0 {
		return true
	}
	return slices.ContainsFunc(o.Groups, func(g string) bool { return slices.Contains(p.Groups, g) })
}

// Lease is dual-commit's single-writer lease (a migrate.WriteLease) on the Watcher's own
// ZooKeeper session: an ephemeral sequential znode LeaseDir/lease-<seq>. An instance holds the
// lease when no znode of a lower sequence belongs to an instance whose selection overlaps its
// own; the others stand by, watching the folder, and re-evaluate on every change.
//
// ZooKeeper cannot fence Kafka (admin commits carry no epoch), so the holder stops on its own
// before its session could expire and its znode pass the lease on. The server expires a
// session T (the granted timeout) after it last heard from the client, never sooner. What
// proves it heard from us is an answered request: one sent at s and answered means the server
// had our session at s or later, so the session lives at least until s+T. The lease probes its
// own znode every T/6 and keeps the send time of the latest answered probe (proof); a write
// may start only before proof+T/2 and gets that as its deadline, leaving T/2 for the standby
// not to be relied on. Nothing else is trusted: go-zookeeper's "connected" says only that
// something arrived lately, not that the server heard us (a one-way partition), and a process
// paused for longer than T (a VM freeze, CPU throttling, SIGSTOP) resumes with its old state
// while the standby already writes; its proof is old by then. On expiry the lease is lost at
// once, and a new znode is created on the new session, at the end of the line.
type Lease struct {
	w     *Watcher
	c     *zk.Conn
	dir   string
	owner LeaseOwner
	data  []byte
	log   *slog.Logger
	asked time.Duration // the session timeout asked for: the fallback before a handshake was seen

	kick  chan struct{}
	stop  context.CancelFunc
	done  chan struct{}
	first chan error // the first evaluation's outcome, for OpenLease

	mu             sync.Mutex
	sessionID      int64 // the current session, 0 while there is none (expired)
	connected      bool
	disconnectedAt time.Time
	proof          time.Time // when the latest request that the server answered on sessionID was sent
	fires          int       // the folder's watch fired: counted, so an evaluation racing a fire re-arms it
	node           string    // our znode's name on sessionID, "" while there is none
	watching       bool      // the folder's children watch is set on the server
	recipe         bool      // the latest listing says our znode holds the lease
	blocker        string    // who is ahead of us when !recipe
	logged         string    // the blocker last logged: one line per holder
	writable       bool      // Hold succeeds (as of the latest update)
	term           context.Context
	endTerm        context.CancelFunc
	gained         chan struct{} // closed while writable
	timer          *time.Timer   // re-evaluates writable when a disconnection's window ends
	closed         bool
}

var _ migrate.WriteLease = (*Lease)(nil)

// leaseWindow is how long after the proof a write may run: half the granted session timeout.
func leaseWindow(timeout time.Duration) time.Duration { return timeout / 2 }

// probeEvery is how often the lease proves its session: three chances within a window.
func probeEvery(timeout time.Duration) time.Duration { return timeout / 6 }

// OpenLease creates the lease znode on w's session and returns once it knows whether it holds
// the lease (State). An error (ZooKeeper unreachable, the folder not writable) is returned
// rather than leaving an instance that can never hold it; later failures are retried.
func OpenLease(ctx context.Context, w *Watcher, owner LeaseOwner) (*Lease, error) {
	owner.Groups = slices.Sorted(slices.Values(owner.Groups))
	data, err := json.Marshal(owner)
	if err != nil {
		return nil, fmt.Errorf("lease znode data: %w", err)
	}
	s := w.r.sessions[0]
	l := &Lease{w: w, c: w.r.conns[0], dir: w.r.path(LeaseDir), owner: owner, data: data,
		log: w.r.log, asked: s.maxWait, kick: make(chan struct{}, 1), done: make(chan struct{}),
		first: make(chan error, 1), gained: make(chan struct{})}
	l.term, l.endTerm = context.WithCancel(context.Background()) // ended: not held yet
	l.endTerm()
	l.mu.Lock()
	if l.c.State() == zk.StateHasSession {
		l.sessionID, l.connected = l.c.SessionID(), true
	}
	l.mu.Unlock()
	if !w.lease.CompareAndSwap(nil, l) {
		return nil, errors.New("the watcher's session has a lease already")
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	go l.run(rctx)
	select {
	case err = <-l.first:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("dual-commit lease in %s: %w", l.dir, err)
	}
	return l, nil
}

// Close stops the lease at once (Hold fails from now on) and deletes its znode, so an instance
// waiting behind it does not wait for the session to end.
func (l *Lease) Close() {
	l.mu.Lock()
	l.closed = true
	l.updateLocked(time.Now())
	node := l.node
	l.mu.Unlock()
	l.stop()
	<-l.done
	l.w.lease.CompareAndSwap(l, nil)
	if node == "" {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := l.c.Delete(l.dir+"/"+node, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			l.log.Debug("dual-commit lease znode not deleted: it goes with the session", "znode", node, "err", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // a lost connection: closing the session removes it
	}
}

// Hold implements migrate.WriteLease.
func (l *Lease) Hold(ctx context.Context) (context.Context, context.CancelFunc, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.updateLocked(now)
	if !l.writable {
		return nil, nil, fmt.Errorf("%w: %s", migrate.ErrLeaseNotHeld, l.reasonLocked())
	}
	deadline := l.proof.Add(leaseWindow(l.timeout()))
	wctx, cancel := context.WithDeadlineCause(ctx, deadline, errLeaseDeadline)
	stop := context.AfterFunc(l.term, cancel) // the lease lost: the write stops at once
	return wctx, func() { stop(); cancel() }, nil
}

var errLeaseDeadline = errors.New("dual-commit lease: the write ran to the latest moment the lease was surely held")

// Gained implements migrate.WriteLease.
func (l *Lease) Gained() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gained
}

// State says whether this instance may write now, and who holds the lease: this instance, the
// one it waits for, or "" when not known yet (for /readyz and the lease metric).
func (l *Lease) State() (held bool, holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updateLocked(time.Now())
	if l.writable {
		return true, l.owner.String()
	}
	return false, l.blocker
}

func (l *Lease) timeout() time.Duration { return l.w.r.sessions[0].grantedTimeout(l.asked) }

func (l *Lease) reasonLocked() string {
	switch {
	case l.closed:
		return "the lease is closed"
	case l.sessionID == 0:
		return "the zookeeper session expired, a new one is not established yet"
	case l.node == "":
		return "no lease znode on the current zookeeper session yet"
	case !l.recipe && l.blocker != "":
		return "held by " + l.blocker
	case !l.recipe:
		return "not evaluated yet"
	}
	return fmt.Sprintf("zookeeper has not answered since %s: the session may expire and the lease pass on",
		l.proof.Format(time.RFC3339Nano))
}

// updateLocked recomputes writable and acts on a change: a new term and a closed gained
// channel when it starts; the term's writes cancelled and a fresh channel when it ends.
func (l *Lease) updateLocked(now time.Time) {
	until := l.proof.Add(leaseWindow(l.timeout()))
	inWindow := now.Before(until)
	w := !l.closed && l.sessionID != 0 && l.node != "" && l.recipe && inWindow
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if w {
		// Nothing else happens when the window ends without a new proof: end the term then.
		l.timer = time.AfterFunc(until.Sub(now), func() {
			l.mu.Lock()
			l.timer = nil
			l.updateLocked(time.Now())
			l.mu.Unlock()
		})
	}
	if w == l.writable {
		return
	}
	l.writable = w
	if w {
		l.term, l.endTerm = context.WithCancel(context.Background())
		close(l.gained)
		l.logged = ""
		l.log.Info("dual-commit lease acquired: this instance writes", "znode", l.node, "owner", l.owner.String(),
			"session_timeout", l.timeout())
		return
	}
	l.endTerm()
	l.gained = make(chan struct{})
	switch {
	case l.closed:
	case !inWindow:
		l.log.Warn("dual-commit lease suspended: zookeeper has not answered for too long to be sure of the session; writes stopped",
			"last_answer_to", l.proof.Format(time.RFC3339Nano), "connected", l.connected, "session_timeout", l.timeout())
	case l.sessionID == 0 || l.node == "":
		l.log.Warn("dual-commit lease lost (zookeeper session expired or lease znode gone): writes stopped")
	default:
		l.log.Warn("dual-commit lease lost: another instance is ahead", "holder", l.blocker)
	}
}

// leaseEvent hands the Watcher's session events to its lease, if any. It must not block.
func (w *Watcher) leaseEvent(ev zk.Event) {
	if l := w.lease.Load(); l != nil {
		l.event(ev)
	}
}

func (l *Lease) event(ev zk.Event) {
	now := time.Now()
	l.mu.Lock()
	switch {
	case ev.Type == zk.EventSession && ev.State == zk.StateHasSession:
		if id := l.c.SessionID(); id != l.sessionID {
			l.node, l.recipe, l.watching, l.proof = "", false, false, time.Time{} // our znode went with the old session
			l.sessionID = id
		}
		l.connected = true
	case ev.Type == zk.EventSession && ev.State == zk.StateDisconnected:
		if l.connected {
			l.connected, l.disconnectedAt = false, now
		}
	case ev.Type == zk.EventSession && ev.State == zk.StateExpired:
		l.sessionID, l.connected, l.node, l.recipe, l.watching, l.proof = 0, false, "", false, false, time.Time{}
	case ev.Type == zk.EventSession:
		l.mu.Unlock()
		return
	case ev.Type == zk.EventNotWatching:
		l.watching = false
	case ev.Path == l.dir:
		l.watching = false // fired: set again by the next evaluation
		l.fires++
	default:
		l.mu.Unlock()
		return
	}
	l.updateLocked(now)
	l.mu.Unlock()
	l.poke()
}

func (l *Lease) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}
