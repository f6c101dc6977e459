package zkreader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/go-zookeeper/zk"
)

// batchOps is the most reads one multiRead carries: batches of 100 cost ZooKeeper 1.5 µs of
// CPU per offset against 16 µs for single Gets (BenchmarkMultiRead), and an answer of 100
// offset znodes stays near 10 KiB.
const batchOps = 100

// errUnimplemented is ZooKeeper's answer to a request it does not know (UnimplementedRequestProcessor,
// before 3.6 for multiRead), after which it closes the connection.
const errUnimplemented = -6

// readOps reads ops and returns one result per op, in order; a per-op error (zk.ErrNoNode,
// zk.ErrNoAuth) is in its result, as go-zookeeper's Get and Children would return it. On the
// fast path the ops go in multiRead batches over the side channel, all batches at once (at
// most sideSlots in flight over the Reader); a batch whose connection is not ready, or broke
// before it was answered, is read with go-zookeeper's single requests instead, which wait for
// its reconnect as the rest of the Reader does. An error is the read's end: a whole request
// refused, an answer that does not decode, ctx.
func (r *Reader) readOps(ctx context.Context, ops []readOp) ([]opResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]opResult, len(ops))
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) { once.Do(func() { first = err }) }
	for lo := 0; lo < len(ops); lo += batchOps {
		hi := min(lo+batchOps, len(ops))
		wg.Go(func() {
			if err := r.readBatch(ctx, ops[lo:hi], out[lo:hi]); err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// readBatch reads one batch into out: one multiRead, or single requests when it cannot.
func (r *Reader) readBatch(ctx context.Context, ops []readOp, out []opResult) error {
	// A connection that broke under a batch is no longer ready: the second try goes to another
	// of the pool, and only when that fails too do the single requests wait for a reconnect.
	for try := 0; r.multi.Load() && try < 2; try++ {
		res, err := r.multiRead(ctx, ops)
		switch {
		case err == nil:
			copy(out, res)
			return nil
		case !errors.Is(err, errSideLost) && !errors.Is(err, errSideNotReady):
			return err
		}
		r.log.Debug("zookeeper multiRead batch not answered", "reads", len(ops), "try", try+1, "reason", err)
		if errors.Is(err, errSideNotReady) {
			break
		}
	}
	return r.fanOut(ctx, len(ops), func(c *zk.Conn, i int) error {
		out[i] = single(c, ops[i])
		return nil
	})
}

// single reads one op with go-zookeeper's own request. A read whose request was lost with its
// connection (a batch falls back to single requests exactly when connections break) is sent
// again, a few times: reads are idempotent, and go-zookeeper holds the next one until it has
// reconnected.
func single(c *zk.Conn, op readOp) opResult {
	for try := 1; ; try++ {
		res := singleOnce(c, op)
		if try == 3 || !connLost(res.err) {
			return res
		}
	}
}

// connLost reports a request that failed with its connection: go-zookeeper's own verdicts (the
// connection closed, or its reconnect's first round found no server yet), or the send error of
// a connection closed under it.
func connLost(err error) bool {
	var op *net.OpError
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &op)
}

func singleOnce(c *zk.Conn, op readOp) opResult {
	if op.list {
		names, _, err := c.Children(op.path)
		return opResult{children: names, err: err}
	}
	data, stat, err := c.Get(op.path)
	res := opResult{data: data, err: err}
	if stat != nil {
		res.mtime = stat.Mtime
	}
	return res
}

// multiRead sends ops as one multiRead on a ready connection of the pool and decodes the answer.
func (r *Reader) multiRead(ctx context.Context, ops []readOp) ([]opResult, error) {
	select {
	case r.sideSlots <- struct{}{}:
		defer func() { <-r.sideSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	cc := r.pickSide()
	if cc == nil {
		return nil, errSideNotReady
	}
	xid, ch, err := cc.sideSend(opMultiRead, appendMultiRead(nil, ops))
	if err != nil {
		return nil, err
	}
	r.multiReads.Add(1)
	if r.sent != nil {
		r.sent(cc)
	}
	rep, err := cc.sideWait(ctx, xid, ch)
	if err != nil {
		return nil, err
	}
	if rep.code == errUnimplemented {
		// A server before 3.6 after all (one that was down when the versions were asked, then
		// came up old): it answers so and closes the connection. Single requests from now on.
		if r.multi.CompareAndSwap(true, false) {
			r.log.Warn("zookeeper server does not serve multiRead: reading with single requests from now on", "server", cc.RemoteAddr())
		}
		return nil, fmt.Errorf("%w: multiRead unimplemented by the server", errSideNotReady)
	}
	if rep.code != 0 {
		// The whole request refused (a session expired or moved): as a single Get would be.
		return nil, fmt.Errorf("zookeeper multiRead of %d reads from %s on: %w", len(ops), ops[0].path, codeError(rep.code))
	}
	return decodeMultiRead(rep.body, ops)
}

// pickSide returns the next ready connection of the pool, round robin, or nil when none is
// (all reconnecting).
func (r *Reader) pickSide() *coalescingConn {
	n := uint64(len(r.sessions))
	start := r.next.Add(1)
	for i := range n {
		if c := r.sessions[(start+i)%n].sideConn(); c != nil {
			return c
		}
	}
	return nil
}

// stat is the part of a Stat the readers use, from an op's result.
func (res opResult) stat() *zk.Stat {
	if res.err != nil {
		return nil
	}
	return &zk.Stat{Mtime: res.mtime}
}

// warmUp sends one request of go-zookeeper's on every connection: its answer shows the
// connection past the handshake and the credentials (side.go), so that the first multiReads
// spread over the whole pool instead of the connections that happened to be used already.
func (r *Reader) warmUp() {
	var wg sync.WaitGroup
	for _, c := range r.conns {
		// Any answer will do, even an error: only its passing through counts.
		wg.Go(func() {
			if _, _, err := c.Exists("/"); err != nil {
				r.log.Debug("zookeeper warm-up request failed", "err", err)
			}
		})
	}
	wg.Wait()
}
