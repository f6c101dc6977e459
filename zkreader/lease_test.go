package zkreader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// leaseWait bounds every wait for a lease to change hands: a hang guard, not a speed check.
const leaseWait = 30 * time.Second

func owner(pid int, groups ...string) LeaseOwner {
	return LeaseOwner{Host: "test-host", PID: pid, Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Groups: groups}
}

// openLease opens a watcher session on servers and a lease on it; both end with the test.
func openLease(t *testing.T, servers string, timeout time.Duration, o LeaseOwner) (*Watcher, *Lease) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), leaseWait)
	defer cancel()
	w, err := OpenWatcher(ctx, Config{Servers: servers, SessionTimeout: timeout, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	l, err := OpenLease(ctx, w, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return w, l
}

// waitHeld waits until l's State says held, failing with its last holder after leaseWait.
func waitHeld(t *testing.T, l *Lease, want bool, what string) string {
	t.Helper()
	deadline := time.Now().Add(leaseWait)
	for {
		held, holder := l.State()
		if held == want && (held || holder != "") {
			return holder
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: lease held %v (holder %q), want held %v within %s", what, held, holder, want, leaseWait)
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}

// TestLeaseOverlapStandby: of two instances on overlapping selections (a regex and a group it
// may match), the first holds and the second stands by naming it; closing the holder's session
// hands the lease to the standby.
func TestLeaseOverlapStandby(t *testing.T) {
	e := newEnv(t)
	wa, a := openLease(t, e.servers(), 4*time.Second, owner(101)) // a --group-regex selection
	_, b := openLease(t, e.servers(), 4*time.Second, owner(202, "g"))
	waitHeld(t, a, true, "the first instance")
	holder := waitHeld(t, b, false, "the second instance")
	for _, want := range []string{"test-host", "pid 101", "2025-01-02T03:04:05Z"} {
		if !strings.Contains(holder, want) {
			t.Errorf("the standby names the holder %q: no %q in it", holder, want)
		}
	}
	_, _, err := b.Hold(context.Background())
	if !errors.Is(err, migrate.ErrLeaseNotHeld) || !strings.Contains(err.Error(), "pid 101") {
		t.Errorf("the standby's Hold: %v, want ErrLeaseNotHeld naming pid 101", err)
	}
	ctx, cancel, err := a.Hold(context.Background())
	if err != nil {
		t.Fatalf("the holder's Hold: %v", err)
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 2*time.Second {
		t.Errorf("the holder's write deadline %v: want at most half the 4 s session timeout from now", time.Until(d))
	}
	wa.Close() // the session ends: its znode goes, the standby's watch fires
	select {
	case <-ctx.Done():
	case <-time.After(leaseWait):
		t.Error("a write context of the closed holder did not end")
	}
	cancel()
	select {
	case <-b.Gained():
	case <-time.After(leaseWait):
		t.Fatal("the standby never gained the lease after the holder's session ended")
	}
	waitHeld(t, b, true, "the standby after the holder left")
}

// TestLeaseDisjointGroups: explicit group lists with no common name both hold; a third that
// shares a group with the first waits for it.
func TestLeaseDisjointGroups(t *testing.T) {
	e := newEnv(t)
	_, a := openLease(t, e.servers(), 4*time.Second, owner(1, "g1", "g2"))
	_, b := openLease(t, e.servers(), 4*time.Second, owner(2, "g3"))
	_, c := openLease(t, e.servers(), 4*time.Second, owner(3, "g2", "g4"))
	waitHeld(t, a, true, "g1,g2")
	waitHeld(t, b, true, "g3, disjoint from g1,g2")
	if holder := waitHeld(t, c, false, "g2,g4"); !strings.Contains(holder, "pid 1 ") {
		t.Errorf("g2,g4 waits for %q, want pid 1 (g1,g2)", holder)
	}
}

// TestLeaseGrantedTimeout: the lease's deadlines follow the session timeout the server granted,
// not the one asked for (ZooKeeper raises 2 s to its minimum, 2 x tickTime = 4 s here).
func TestLeaseGrantedTimeout(t *testing.T) {
	e := newEnv(t)
	_, l := openLease(t, e.servers(), 2*time.Second, owner(1))
	if got := l.timeout(); got != 4*time.Second {
		t.Errorf("granted session timeout %s, want 4s (the stack's minimum)", got)
	}
}

// TestLeaseNeedsAnsweredProbes: the lease is held only while a request the server answered was
// sent within half the session timeout; each write's deadline is that bound. A holder whose
// last answer is older (as after a process freeze longer than the session timeout, when
// go-zookeeper still says connected) refuses writes until a new probe is answered.
func TestLeaseNeedsAnsweredProbes(t *testing.T) {
	e := newEnv(t)
	const timeout = 4 * time.Second
	_, a := openLease(t, e.servers(), timeout, owner(1))
	waitHeld(t, a, true, "a lone instance")
	ctx, cancel, err := a.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	proof := a.proof
	a.mu.Unlock()
	if d, _ := ctx.Deadline(); !d.Equal(proof.Add(timeout / 2)) {
		t.Errorf("write deadline %s, want the proof %s + half the session timeout", d, proof)
	}
	cancel()
	a.mu.Lock()
	a.proof = time.Now().Add(-timeout) // as after a pause longer than the session timeout
	a.updateLocked(time.Now())
	a.mu.Unlock()
	if _, _, err := a.Hold(context.Background()); !errors.Is(err, migrate.ErrLeaseNotHeld) {
		t.Errorf("Hold with its last answer a session timeout old: %v, want ErrLeaseNotHeld", err)
	}
	waitHeld(t, a, true, "after the next answered probe")
}

// TestLeaseSessionExpiry cuts the holder off ZooKeeper silently (packets dropped, no reset) until
// the server expires its session and the standby takes over. The holder must have stopped
// before: no write context it handed out may reach the moment the standby holds the lease.
// Afterwards it joins the line again on a new session, as a standby naming the new holder.
func TestLeaseSessionExpiry(t *testing.T) {
	e := newEnv(t)
	p := newProxy(t, e.zk)
	const timeout = 4 * time.Second
	_, a := openLease(t, p.addr()+e.root, timeout, owner(1))
	_, b := openLease(t, e.servers(), timeout, owner(2))
	waitHeld(t, a, true, "the first instance")
	waitHeld(t, b, false, "the second instance")

	// A writer that holds the lease as often as it can, as the mirror does before each write.
	var (
		mu        sync.Mutex
		lastEnd   time.Time // the latest deadline of a context a's Hold returned
		refusedAt time.Time // when a's Hold first refused after the cut
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			ctx, cancel, err := a.Hold(context.Background())
			now := time.Now()
			mu.Lock()
			if err == nil {
				d, _ := ctx.Deadline()
				if d.After(lastEnd) {
					lastEnd = d
				}
				cancel()
			} else if refusedAt.IsZero() {
				refusedAt = now
			}
			mu.Unlock()
		}
	}()
	cutAt := time.Now()
	p.blackhole()
	var tookOver time.Time
	select {
	case <-b.Gained():
		tookOver = time.Now()
	case <-time.After(leaseWait):
		t.Fatal("the standby never took over after the holder was cut off")
	}
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	t.Logf("cut at 0, holder stopped at %s, its last write deadline %s, standby held at %s",
		refusedAt.Sub(cutAt), lastEnd.Sub(cutAt), tookOver.Sub(cutAt))
	if refusedAt.IsZero() || !refusedAt.Before(tookOver) {
		t.Errorf("the holder still held the lease when the standby took over (stopped at %v)", refusedAt)
	}
	if !lastEnd.Before(tookOver) {
		t.Errorf("a write context of the old holder ran until %s, after the standby took over (%s)",
			lastEnd.Sub(cutAt), tookOver.Sub(cutAt))
	}
	p.heal()
	if holder := waitHeld(t, a, false, "the old holder on its new session"); !strings.Contains(holder, "pid 2 ") {
		t.Errorf("the old holder waits for %q, want pid 2", holder)
	}
	deadline := time.Now().Add(leaseWait)
	for a.nodeName() == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	if a.nodeName() == "" {
		t.Error("the old holder has no lease znode on its new session")
	}
}

func (l *Lease) nodeName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.node
}

// proxy forwards TCP to ZooKeeper; blackhole cuts it silently: the server side is closed (the
// server keeps the session until it times out) while the client side stays open and quiet, as
// behind a lost network, and new connections are accepted and left unanswered.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn // every open connection, both sides
	ups    []net.Conn // the server sides
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() {
		ln.Close() //nolint:errcheck // closing: nothing to do about an error
		p.heal()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue // left open and silent
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close() //nolint:errcheck // the client sees the close
			continue
		}
		p.mu.Lock()
		p.conns, p.ups = append(p.conns, up), append(p.ups, up)
		p.mu.Unlock()
		go io.Copy(up, c) //nolint:errcheck // ends with either side
		go io.Copy(c, up) //nolint:errcheck // ends with either side
	}
}

// blackhole closes the server sides and stops answering; client sides stay open.
func (p *proxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.ups {
		c.Close() //nolint:errcheck // cutting
	}
	p.ups = nil
}

// heal closes every connection, so the client dials again, and forwards new ones.
func (p *proxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for _, c := range p.conns {
		c.Close() //nolint:errcheck // cutting
	}
	p.conns, p.ups = nil, nil
}
