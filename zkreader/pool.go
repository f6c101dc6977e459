package zkreader

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"
)

// calls is a Reader's queue of ZooKeeper calls and the goroutines that run them: at most
// InFlight, started as calls arrive and kept until Close. A go-zookeeper call blocks its
// goroutine until the answer, so each call in flight needs one; reusing them instead of starting
// a goroutine per call saves the start and the stack growth of every call (a 100k-offset plan
// spent 9% of its CPU growing fresh stacks). Queueing never blocks, so the continuation of a
// call may queue more calls from a worker. A call must never wait for another call: with every
// worker waiting, none would be left to run them.
type calls struct {
	mu      sync.Mutex
	wake    sync.Cond
	queue   []func()
	max     int  // workers at most: the requests in flight over the whole pool
	workers int  // running
	idle    int  // waiting for a call and not yet woken
	closed  bool // workers leave once the queue is empty
}

func newCalls(max int) *calls {
	q := &calls{max: max}
	q.wake.L = &q.mu
	return q
}

// push queues call; an idle worker takes it, or a new one while fewer than max run.
func (q *calls) push(call func()) {
	q.mu.Lock()
	q.queue = append(q.queue, call)
	switch {
	case q.idle > 0:
		q.idle--
		q.wake.Signal()
	case q.workers < q.max:
		q.workers++
		go q.work()
	}
	q.mu.Unlock()
}

// work runs queued calls in order until the queue is empty after close.
func (q *calls) work() {
	q.mu.Lock()
	for {
		for len(q.queue) == 0 {
			if q.closed {
				q.workers--
				q.mu.Unlock()
				return
			}
			q.idle++
			q.wake.Wait()
		}
		call := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		q.mu.Unlock()
		call()
		q.mu.Lock()
	}
}

// close lets the workers leave once they have run what is queued. A call queued after close
// still runs (on a closed connection it fails at once), so no caller waits forever.
func (q *calls) close() {
	q.mu.Lock()
	q.closed = true
	q.idle = 0
	q.wake.Broadcast()
	q.mu.Unlock()
}

// fanOut runs call(c, i) for every i in [0, n) on the Reader's workers, each on a connection of
// the pool (go-zookeeper pipelines the calls of one connection), and waits for them all. The
// first error cancels the calls not started yet and is returned.
func (r *Reader) fanOut(ctx context.Context, n int, call func(c *zk.Conn, i int) error) error {
	p := r.newPipe(ctx)
	for i := range n {
		p.run(func(c *zk.Conn) (func() error, error) { return nil, call(c, i) })
	}
	return p.wait()
}

// pipe runs a tree of calls in which an answer may start more calls (a listing, then the Gets
// of what it listed), all on the Reader's workers. The first error cancels the rest and is what
// wait returns; a cancelled ctx is noticed here, between calls (go-zookeeper takes no context).
type pipe struct {
	r      *Reader
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	first  error
}

func (r *Reader) newPipe(ctx context.Context) *pipe {
	ctx, cancel := context.WithCancel(ctx)
	return &pipe{r: r, ctx: ctx, cancel: cancel}
}

func (p *pipe) fail(err error) {
	p.once.Do(func() {
		p.first = err
		p.cancel()
	})
}

// run queues one call on a connection of the pool; the then it returns, if any, runs next on
// the same worker and may run more calls. run never blocks.
func (p *pipe) run(call func(c *zk.Conn) (then func() error, err error)) {
	p.wg.Add(1)
	p.r.calls.push(func() {
		defer p.wg.Done()
		if err := p.ctx.Err(); err != nil {
			p.fail(err)
			return
		}
		then, err := call(p.r.conn())
		if err == nil && then != nil {
			err = then()
		}
		if err != nil {
			p.fail(err)
		}
	})
}

// wait waits for every call run so far and for those they ran, and returns the first error.
func (p *pipe) wait() error {
	p.wg.Wait()
	p.cancel()
	return p.first
}
