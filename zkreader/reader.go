package zkreader

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Reader is a pool of ZooKeeper connections reading (and, in writer.go, writing) the legacy
// offset store. It is safe for concurrent use; Close it when done.
type Reader struct {
	conns          []*zk.Conn
	sessions       []*session // one per conn: their last network connections are closed on Close
	hosts          []string
	chroot         string
	groupsInFlight int
	log            *slog.Logger
	// tls is Config.TLS: every connection of the pool and the watcher dials through it.
	tls *tls.Config
	// check gives Open an early verdict on servers that can never give a session (diagnose.go).
	check *openCheck
	// calls runs every request, at most InFlight at once over the whole pool.
	calls *calls
	next  atomic.Uint64
	// multi: every server is ZooKeeper 3.6+, reads go in multiRead batches (fast.go); false:
	// single requests, as every server before 3.6 needs. A server that refuses a multiRead as
	// unimplemented turns it off for good (readops.go).
	multi atomic.Bool
	// sideSlots bounds the multiReads in flight over the pool (InFlight/4): the server does not
	// count them against its own limit (side.go). A quarter rather than a sixteenth of InFlight:
	// a copy batch's re-check (about 130 multiReads at the defaults) then goes out at once, and
	// copy took 1.30x its --recheck=gates time instead of 1.59x (BenchmarkReadPaths, 100k).
	sideSlots chan struct{}
	// multiReads counts the multiReads sent, for the tests that tell the paths apart.
	multiReads atomic.Int64
	// sent, when set (by tests), is called with the connection of each multiRead just sent.
	sent func(*coalescingConn)
}

var _ migrate.LegacyStore = (*Reader)(nil)

// prepare checks cfg and returns it with its defaults, a Reader without connections yet, and the
// digest credentials every connection sends: the shared first step of Open and OpenWatcher.
func prepare(ctx context.Context, cfg Config) (Config, *Reader, string, []byte, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return cfg, nil, "", nil, err
	}
	hosts, chroot, err := ParseServers(cfg.Servers)
	if err != nil {
		return cfg, nil, "", nil, err
	}
	scheme, auth, err := parseAuth(cfg.Auth)
	if err != nil {
		return cfg, nil, "", nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The lookups behind Open's early verdicts get no more than the session timeout: a slow
	// resolver must not add its own retries to every run.
	lctx, cancel := context.WithTimeout(ctx, cfg.SessionTimeout)
	defer cancel()
	r := &Reader{hosts: hosts, chroot: chroot, log: log, tls: cfg.TLS, check: newOpenCheck(lctx, hosts, cfg.SessionTimeout)}
	return cfg, r, scheme, auth, nil
}

// limit sets the Reader's bounds from cfg's sizes (sizedFor): before its first read.
func (r *Reader) limit(cfg Config) {
	r.groupsInFlight = cfg.GroupsInFlight
	r.calls = newCalls(cfg.InFlight)
	r.sideSlots = make(chan struct{}, max(1, cfg.InFlight/4))
}

// Open dials cfg.Connections connections and waits until each has a session (bounded by ctx
// and cfg.SessionTimeout) and, with cfg.Auth, has sent its digest credentials. An unreachable
// ZooKeeper is one error naming the servers; when every server refuses the connection or answers
// but not as ZooKeeper (a *NotZooKeeperError), that error comes at once. With Connections left
// zero, the multiRead path's sessions are dialled while the servers' versions are asked, and the
// rest of the single-request path's only once the versions say so.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	cfg, r, scheme, auth, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	log := r.log
	detected := make(chan readPath, 1)
	dctx, cancelDetect := context.WithCancel(ctx)
	defer cancelDetect()
	go func() { detected <- detectReadPath(dctx, r.hosts, min(cfg.SessionTimeout, 5*time.Second), r.tls) }()
	first := cfg.Connections
	if first == 0 {
		first = min(MultiConnections, SingleConnections)
	}
	if err := r.dial(ctx, cfg, first, scheme, auth); err != nil {
		r.Close()
		return nil, err
	}
	path := <-detected
	if cfg.NoMultiRead {
		path = readPath{reason: "multiRead turned off (Config.NoMultiRead)"}
	}
	cfg = cfg.sizedFor(path.multi)
	r.limit(cfg)
	if err := r.dial(ctx, cfg, cfg.Connections-len(r.conns), scheme, auth); err != nil {
		r.Close()
		return nil, err
	}
	if path.multi {
		r.warmUp()
	}
	r.multi.Store(path.multi)
	log.Debug("zookeeper connected", "servers", r.servers(), "chroot", r.chroot, "connections", len(r.conns),
		"in_flight", cfg.InFlight, "multiread", path.multi, "why", path.reason)
	return r, nil
}

// dial adds n connections to the pool and waits for their sessions.
func (r *Reader) dial(ctx context.Context, cfg Config, n int, scheme string, auth []byte) error {
	sessions := make([]*session, 0, max(n, 0))
	for range n {
		i := len(r.conns)
		s := &session{ready: make(chan struct{}), log: r.log.With("zk_conn", i), maxWait: cfg.SessionTimeout, check: r.check, tls: r.tls}
		c, _, err := zk.Connect(r.hosts, cfg.SessionTimeout,
			zk.WithEventCallback(s.event),
			zk.WithDialer(s.dial),
			zk.WithLogger(s),
			zk.WithLogInfo(r.log.Enabled(ctx, slog.LevelDebug)),
		)
		if err != nil {
			return fmt.Errorf("zookeeper %s: %w", r.servers(), err)
		}
		r.conns = append(r.conns, c)
		r.sessions = append(r.sessions, s)
		sessions = append(sessions, s)
	}
	if len(sessions) == 0 {
		return nil
	}
	return r.waitSessions(ctx, cfg.SessionTimeout, sessions, scheme, auth)
}

// waitSessions waits for every connection's session and authenticates it. go-zookeeper takes
// no context: on a timeout the caller closes the connections, which unblocks AddAuth.
func (r *Reader) waitSessions(ctx context.Context, timeout time.Duration, sessions []*session, scheme string, auth []byte) error {
	errTimeout := errors.New("session timeout")
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	errs := make(chan error, len(sessions)) // buffered: late goroutines never block
	for i, s := range sessions {
		go func() { errs <- r.startSession(ctx, r.conns[i], s, scheme, auth) }()
	}
	for range sessions {
		var err error
		select {
		case err = <-errs:
		case <-ctx.Done():
			err = ctx.Err()
		case <-r.check.failure():
			return fmt.Errorf("zookeeper %s: %w", r.servers(), r.check.error())
		}
		if err == nil {
			continue
		}
		if ctx.Err() == nil {
			return err
		}
		if context.Cause(ctx) != errTimeout {
			return fmt.Errorf("zookeeper %s: connect: %w", r.servers(), context.Cause(ctx))
		}
		cause := errors.New("no session established")
		for _, s := range sessions {
			if err := s.lastError(); err != nil {
				cause = err
			}
		}
		return fmt.Errorf("zookeeper %s: not reachable within %s: %w", r.servers(), timeout, cause)
	}
	return nil
}

// startSession waits for c's first session, then sends the credentials.
func (r *Reader) startSession(ctx context.Context, c *zk.Conn, s *session, scheme string, auth []byte) error {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if scheme == "" {
		return nil
	}
	// AddAuth also records the credentials, so go-zookeeper resends them on every reconnect,
	// including the new session after an expiry.
	if err := c.AddAuth(scheme, auth); err != nil {
		return fmt.Errorf("zookeeper %s: authenticate: %w", r.servers(), err)
	}
	return nil
}

// Close ends every session. Ephemeral znodes created through this Reader vanish with it.
func (r *Reader) Close() {
	if r.calls != nil { // nil when Open failed before the pool was sized
		r.calls.close()
	}
	var wg sync.WaitGroup
	for _, c := range r.conns {
		// go-zookeeper's Close waits up to a few seconds for the server: close in parallel.
		wg.Go(c.Close)
	}
	wg.Wait()
	for _, s := range r.sessions {
		s.closeConn(nil)
	}
}

// servers names ZooKeeper in errors as the operator wrote it, without credentials.
func (r *Reader) servers() string { return strings.Join(r.hosts, ",") + r.chroot }

// conn picks the next connection of the pool, round robin.
func (r *Reader) conn() *zk.Conn { return r.conns[r.next.Add(1)%uint64(len(r.conns))] }

// path is the full znode path of a path relative to the chroot.
func (r *Reader) path(rel string) string { return r.chroot + rel }

// session follows one connection's state through go-zookeeper's callbacks, which must not block.
type session struct {
	ready chan struct{} // closed at the first session
	once  sync.Once
	log   *slog.Logger
	mu    sync.Mutex
	last  error // the latest dial or handshake failure, for the "not reachable" error
	// maxWait bounds how long one read may wait (the session timeout): see boundedConn.
	maxWait time.Duration
	conn    net.Conn // the latest connection dialled (under mu)
	// granted is the session timeout the server granted at the latest handshake (ms, 0 until
	// one), read off the wire: go-zookeeper keeps it private. The lease needs it (lease.go).
	granted atomic.Int32
	check   *openCheck  // the Reader's, told what each dial and handshake found (nil: none)
	tls     *tls.Config // nil: plain TCP
	// zxid is the highest zxid the side channel's answers carried in this session (side.go).
	zxid atomic.Int64
	// dials counts the connections dialled, for the tests that check none was lost.
	dials atomic.Int32
	// netDial, when set (by tests), dials the network connection instead of net.DialTimeout.
	netDial func(network, addr string, timeout time.Duration) (net.Conn, error)
}

// sideConn is the session's current connection when it is ready for requests of our own, or
// nil.
func (s *session) sideConn() *coalescingConn {
	s.mu.Lock()
	c, _ := s.conn.(*coalescingConn)
	s.mu.Unlock()
	if c == nil || c.side == nil || !c.side.ready.Load() {
		return nil
	}
	return c
}

func (s *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.once.Do(func() { close(s.ready) })
		s.log.Debug("zookeeper session established", "server", ev.Server)
	case zk.StateExpired:
		s.log.Warn("zookeeper session expired: reads in flight fail, ephemeral znodes are gone", "server", ev.Server)
	case zk.StateDisconnected:
		s.log.Debug("zookeeper disconnected", "server", ev.Server)
	}
}

// dial is DialCoalescing with the side channel (side.go), over TLS when configured, that
// remembers its failure: go-zookeeper only logs it. A failed TLS handshake is a verdict on the server (diagnose.go), not a reason to
// wait.
func (s *session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	var raw net.Conn
	var err error
	switch {
	case s.netDial != nil:
		raw, err = s.netDial(network, addr, timeout)
	case s.tls != nil:
		raw, err = dialTLS(network, addr, s.check.name(addr), timeout, s.tls)
	default:
		raw, err = net.DialTimeout(network, addr, timeout)
	}
	if err == nil {
		c = newSideConn(raw, &s.zxid)
		s.dials.Add(1)
	}
	s.check.dialed(addr, err)
	if err != nil {
		s.setLast(err)
		var te *TLSError
		if errors.As(err, &te) && !errors.Is(err, context.DeadlineExceeded) {
			s.check.markBad(addr, err)
		}
		return nil, err
	}
	s.closeConn(c)
	if s.maxWait > 0 {
		c = boundedConn{Conn: c, max: s.maxWait}
	}
	return &handshakeConn{Conn: c, s: s, addr: addr}, nil
}

// closeConn closes the session's previous connection and keeps next (nil on Close). go-zookeeper
// uses one connection at a time, and dials again only once it is done with the last one, but
// after a handshake that found the session expired it leaves that one open: its sender
// goroutine, buffer and socket stayed for good, one per expiry in a long dual-commit run.
func (s *session) closeConn(next net.Conn) {
	s.mu.Lock()
	prev := s.conn
	s.conn = next
	s.mu.Unlock()
	if prev != nil {
		_ = prev.Close() // an error says it was closed already
	}
}

// boundedConn caps every read deadline at max from now. go-zookeeper waits for the handshake
// answer up to 10 x 2/3 of the session timeout (67 s at 10 s): a ZooKeeper that is restarting
// accepts the connection and never answers, which stalled every reconnect for that long.
// Capped, the client gives up after one session timeout and dials
// again. Only deadlines far beyond the session timeout are capped: the receive loop's own
// deadline is 2/3 of the session timeout the server granted, which may exceed the one asked for
// (a server raises it to its minimum, 4 s by default), and capping that would time out an idle
// connection between two pings.
type boundedConn struct {
	net.Conn
	max time.Duration
}

func (c boundedConn) SetReadDeadline(t time.Time) error {
	now := time.Now()
	if t.IsZero() || t.After(now.Add(3*c.max)) {
		t = now.Add(c.max)
	}
	return c.Conn.SetReadDeadline(t)
}

func (c boundedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// Printf receives go-zookeeper's log lines: forwarded at debug level, and a handshake failure
// is remembered (a port that accepts TCP but does not speak ZooKeeper fails there).
func (s *session) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if strings.HasPrefix(msg, "authentication failed") {
		s.setLast(errors.New(msg))
	}
	s.log.Debug("go-zookeeper: " + msg)
}

func (s *session) setLast(err error) {
	s.mu.Lock()
	s.last = err
	s.mu.Unlock()
}

func (s *session) lastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
