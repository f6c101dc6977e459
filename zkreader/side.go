package zkreader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// The side channel: requests of our own (multiRead, which go-zookeeper cannot send) on the
// connection go-zookeeper owns, so that auth, the chroot (a prefix of our own paths), pings,
// reconnects and session expiry all stay go-zookeeper's. The coalescingConn sees every byte
// both ways: it appends our frames whole between go-zookeeper's (which it also receives whole,
// one Write per frame), and takes the answers to ours out of what Read returns before
// go-zookeeper's receive loop sees them.
//
// Our xids are at or below sideXidTop. go-zookeeper's are never negative (its counter is
// masked with 0x7fffffff), and the server gives meaning to -1 (notification), -2 (ping),
// -4 (auth) and -8 (setWatches) only. The server answers with the xid it was sent
// (FinalRequestProcessor builds the ReplyHeader from the request's cxid) and neither rejects
// nor throttles a non-positive xid: ServerCnxn.incrOutstandingAndCheckThrottle returns at once
// for xid <= 0, which is also why Reader bounds the side requests in flight itself (sideSlots).
const (
	sideXidTop = -1 << 30
	pingXid    = -2
	// maxSideFrame bounds an answer to one of ours: far above what a batch of reads brings
	// (jute.maxbuffer is 1 MiB by default), and short of what a corrupt length could ask for.
	maxSideFrame = 64 << 20
)

func isSideXid(xid int32) bool { return xid <= sideXidTop }

// errSideLost fails the side requests in flight on a connection that broke, and those sent
// after: the read is retried on go-zookeeper's path, which waits for the reconnect.
var errSideLost = errors.New("zookeeper connection lost with our requests in flight")

// errSideNotReady: the connection has not yet passed go-zookeeper's handshake and its re-sent
// credentials, so a request of ours could overtake them.
var errSideNotReady = errors.New("zookeeper connection not ready for our requests")

// sideReply is the answer to one side request: the ReplyHeader's zxid and err, then the body.
type sideReply struct {
	zxid int64
	code int32
	body []byte
	err  error // errSideLost (wrapped): no answer will come
}

// side is the side channel's state of one coalescingConn; nil when it has none.
type side struct {
	// Read's state, touched by go-zookeeper's one reading goroutine only.
	frames int // frames passed on so far: the first is the ConnectResponse, without a ReplyHeader
	left   int // bytes of the frame being passed on still to return

	ready atomic.Bool
	// zxid is the session's highest zxid seen in our answers (shared by its connections), so
	// that a reconnect never goes to a server behind what we have read: see patchConnect.
	zxid  *atomic.Int64
	wrote atomic.Bool // the ConnectRequest went out
	// ahead is how far ahead go-zookeeper last set the read deadline (0: none).
	ahead atomic.Int64

	mu      sync.Mutex
	next    uint32
	pending map[int32]chan sideReply
	lost    error
}

func newSide(zxid *atomic.Int64) *side {
	return &side{zxid: zxid, pending: map[int32]chan sideReply{}}
}

// readFramed is Read with the answers to our requests taken out. It returns go-zookeeper's
// bytes as they are, never past the end of a frame, so that at every frame boundary it can
// look at the next frame's xid first.
func (c *coalescingConn) readFramed(p []byte) (int, error) {
	s := c.side
	for s.left == 0 {
		if err := c.nextFrame(); err != nil {
			c.failSide(err)
			return 0, err
		}
	}
	n, err := c.r.Read(p[:min(len(p), s.left)])
	s.left -= n
	if err != nil {
		c.failSide(err)
	}
	return n, err
}

// nextFrame looks at the frame that starts next: ours is read and handed to its caller; any
// other is left to be passed on. Bytes that cannot start a frame (a peer that is not
// ZooKeeper, a connection cut mid-header) are passed on as they are, with the error after
// them, as go-zookeeper saw them before the side channel existed.
func (c *coalescingConn) nextFrame() error {
	s := c.side
	want := 8 // length and xid
	if s.frames == 0 {
		want = 4 // the ConnectResponse has no xid
	}
	hdr, err := c.r.Peek(want)
	if err != nil {
		if n := c.r.Buffered(); n > 0 {
			s.left = n
			return nil
		}
		return err
	}
	size := int(binary.BigEndian.Uint32(hdr))
	s.frames++
	if s.frames == 1 {
		s.left = 4 + size
		return nil
	}
	xid := int32(binary.BigEndian.Uint32(hdr[4:]))
	if !isSideXid(xid) {
		if xid >= 0 || xid == pingXid {
			// An answer to go-zookeeper's own request, or to its ping: its send loop runs,
			// and it starts only after the credentials were re-sent and answered.
			s.ready.Store(true)
		}
		s.left = 4 + size
		return nil
	}
	if size < replyHeaderLen || size > maxSideFrame {
		return fmt.Errorf("zookeeper answer of %d bytes to request %d", size, xid)
	}
	frame := make([]byte, 4+size)
	if _, err := io.ReadFull(c.r, frame); err != nil {
		return err
	}
	c.deliver(xid, frame[4:])
	if ahead := time.Duration(s.ahead.Load()); ahead > 0 {
		return c.Conn.SetReadDeadline(time.Now().Add(ahead))
	}
	return nil
}

// deliver hands an answer to the request waiting for it; an answer nobody waits for any more
// (its caller gave up) is dropped.
func (c *coalescingConn) deliver(xid int32, frame []byte) {
	s := c.side
	zxid := int64(binary.BigEndian.Uint64(frame[4:]))
	for cur := s.zxid.Load(); zxid > cur && !s.zxid.CompareAndSwap(cur, zxid); cur = s.zxid.Load() {
	}
	s.mu.Lock()
	ch := s.pending[xid]
	delete(s.pending, xid)
	s.mu.Unlock()
	if ch != nil {
		ch <- sideReply{zxid: zxid, code: int32(binary.BigEndian.Uint32(frame[12:])), body: frame[replyHeaderLen:]}
	}
}

// failSide fails every side request in flight and every later one: their answers can no
// longer come on this connection.
func (c *coalescingConn) failSide(cause error) {
	s := c.side
	if s == nil {
		return
	}
	s.ready.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = fmt.Errorf("%w: %v", errSideLost, cause)
	}
	for xid, ch := range s.pending {
		ch <- sideReply{err: s.lost}
		delete(s.pending, xid)
	}
}

// patchConnect raises the lastZxidSeen of go-zookeeper's ConnectRequest (the first frame it
// writes: length, protocolVersion int32, lastZxidSeen int64, ...) to the highest zxid our own
// answers carried. go-zookeeper tracks only its own answers; without this, after reading
// through the side channel from a server at zxid Z, it could resume the session on a server
// still behind Z, and a later read there would go back in time. The server refuses a client
// that has seen more than it has, and go-zookeeper then tries the next one.
func (s *side) patchConnect(p []byte) []byte {
	if !s.wrote.CompareAndSwap(false, true) || len(p) < 16 {
		return p
	}
	seen := s.zxid.Load()
	if seen <= int64(binary.BigEndian.Uint64(p[8:16])) {
		return p
	}
	q := append([]byte(nil), p...)
	binary.BigEndian.PutUint64(q[8:16], uint64(seen))
	return q
}

// sideSend queues one request of ours (its opcode and body) and returns where its answer will
// arrive. It fails with errSideNotReady before the connection is ready, and with errSideLost
// once it broke.
func (c *coalescingConn) sideSend(opcode int32, body []byte) (int32, <-chan sideReply, error) {
	s := c.side
	if s == nil || !s.ready.Load() {
		return 0, nil, errSideNotReady
	}
	ch := make(chan sideReply, 1)
	s.mu.Lock()
	if s.lost != nil {
		err := s.lost
		s.mu.Unlock()
		return 0, nil, err
	}
	s.next++
	xid := int32(sideXidTop - int64(s.next%(1<<30)))
	s.pending[xid] = ch
	s.mu.Unlock()

	frame := make([]byte, 12, 12+len(body))
	binary.BigEndian.PutUint32(frame, uint32(8+len(body)))
	binary.BigEndian.PutUint32(frame[4:], uint32(xid))
	binary.BigEndian.PutUint32(frame[8:], uint32(opcode))
	frame = append(frame, body...)
	if _, err := c.Write(frame); err != nil {
		c.forget(xid)
		return 0, nil, fmt.Errorf("%w: %v", errSideLost, err)
	}
	return xid, ch, nil
}

// sideWait waits for the answer of xid, or for ctx.
func (c *coalescingConn) sideWait(ctx context.Context, xid int32, ch <-chan sideReply) (sideReply, error) {
	select {
	case r := <-ch:
		return r, r.err
	case <-ctx.Done():
		c.forget(xid)
		return sideReply{}, ctx.Err()
	}
}

func (c *coalescingConn) forget(xid int32) {
	c.side.mu.Lock()
	delete(c.side.pending, xid)
	c.side.mu.Unlock()
}
