package zkreader

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// flushTimeout bounds one write of the coalesced requests; a peer that takes no bytes for this
// long is gone, and the connection is closed so that go-zookeeper reconnects.
const flushTimeout = 10 * time.Second

// coalescingConn cuts the system calls of a pipelined ZooKeeper connection. go-zookeeper
// writes every request with a write(2) of its own and reads every response with two read(2)s
// (length, then body); with hundreds of requests in flight on a 2-core machine those calls
// were the largest cost of a read (41% of the CPU profile of a 100k-offset plan). Here writes
// are appended to a buffer that one goroutine sends: while it is in a write, the requests that
// arrive meanwhile pile up and leave together in the next one, so an idle connection sends at
// once and a busy one sends in bulk. Reads go through a bufio.Reader, which takes many
// responses per read(2).
//
// A failed send is returned by the next Write and closes the connection, which go-zookeeper
// sees as a broken connection (reconnect, session resume), as it would have seen the error of
// its own write.
type coalescingConn struct {
	net.Conn
	r    *bufio.Reader
	kick chan struct{} // one pending wake-up for the sender
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	pending []byte
	err     error

	side *side // our own requests on go-zookeeper's connection (side.go); nil: none
}

// DialCoalescing is a go-zookeeper dialer (zk.WithDialer) that returns the connection wrapped
// as the Reader's own connections are. The benchmarks give it to their raw reader so that the
// reader's ceiling is measured with the same transport.
func DialCoalescing(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return newCoalescingConn(c), nil
}

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go cc.sendLoop()
	return cc
}

// newSideConn is newCoalescingConn with the side channel (side.go); zxid is the session's.
func newSideConn(c net.Conn, zxid *atomic.Int64) *coalescingConn {
	cc := &coalescingConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), kick: make(chan struct{}, 1), done: make(chan struct{}),
		side: newSide(zxid)}
	go cc.sendLoop()
	return cc
}

func (c *coalescingConn) Read(p []byte) (int, error) {
	if c.side != nil {
		return c.readFramed(p)
	}
	return c.r.Read(p)
}

// Write queues p for the sender; it never blocks on the network. go-zookeeper writes each of
// its frames in one call, so a frame is never split by one of ours.
func (c *coalescingConn) Write(p []byte) (int, error) {
	n := len(p)
	if c.side != nil {
		p = c.side.patchConnect(p)
	}
	c.mu.Lock()
	if err := c.err; err != nil {
		c.mu.Unlock()
		return 0, err
	}
	c.pending = append(c.pending, p...)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // a wake-up is already pending: the sender will take p with it
	}
	return n, nil
}

// SetWriteDeadline is the sender's business: go-zookeeper sets one around each of its writes,
// which here only queue bytes.
func (c *coalescingConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline applies to reads only, for the same reason.
func (c *coalescingConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline also remembers how far ahead the deadline was set: go-zookeeper sets one
// before each frame it reads, and the side channel sets it again as far ahead after each answer
// of ours it takes out, as go-zookeeper would have after a frame of its own. Otherwise a long
// run of our answers, with no frame of go-zookeeper's among them, would time its read out.
func (c *coalescingConn) SetReadDeadline(t time.Time) error {
	if c.side != nil {
		ahead := time.Duration(0)
		if !t.IsZero() {
			ahead = time.Until(t)
		}
		c.side.ahead.Store(int64(ahead))
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *coalescingConn) Close() error {
	c.once.Do(func() { close(c.done) })
	c.failSide(net.ErrClosed)
	return c.Conn.Close()
}

func (c *coalescingConn) sendLoop() {
	var out []byte
	for {
		select {
		case <-c.kick:
		case <-c.done:
			return
		}
		// Let the goroutines that are ready to run first: they are the callers about to queue
		// requests, and their bytes then leave in this write. Without it, on a machine with few
		// cores the sender woke for nearly every request and sent each in a small write of its
		// own (docs/benchmarks.md). When nothing else is ready to run, Gosched returns at once:
		// a lone request is not delayed.
		runtime.Gosched()
		c.mu.Lock()
		out, c.pending = c.pending, out[:0]
		c.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		err := c.Conn.SetWriteDeadline(time.Now().Add(flushTimeout))
		if err == nil {
			_, err = c.Conn.Write(out)
		}
		if err != nil {
			c.once.Do(func() { close(c.done) })
			// The send error is the one that matters; recvLoop sees the closed connection.
			if cerr := c.Conn.Close(); cerr != nil {
				err = fmt.Errorf("%w (and closing: %v)", err, cerr)
			}
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			c.failSide(err)
			return
		}
	}
}
