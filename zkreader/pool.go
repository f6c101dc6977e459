package zkreader

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"
)

// acquire takes one in-flight slot, or fails once ctx is done: this is where long reads notice
// a cancellation between calls (go-zookeeper itself takes no context).
func (r *Reader) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Reader) release() { <-r.sem }

// fanOut runs call(c, i) for every i in [0, n), concurrently, each holding one in-flight slot
// on a connection of the pool, and waits for them all. go-zookeeper pipelines the concurrent
// calls of one connection. The first error stops new calls and is returned. A call holds its
// slot only while its request is outstanding, so calls never wait on each other's slots.
func (r *Reader) fanOut(ctx context.Context, n int, call func(c *zk.Conn, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			cancel()
		})
	}
	for i := range n {
		if err := r.acquire(ctx); err != nil {
			fail(err)
			break
		}
		wg.Go(func() {
			err := call(r.conn(), i)
			r.release()
			if err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	return first
}

// pipe runs a tree of requests in which an answer may start more requests (a listing, then the
// Gets of what it listed), all sharing the pool's in-flight slots. The first error cancels the
// rest and is what wait returns.
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

// run sends one request: call runs on a connection of the pool holding one in-flight slot;
// the then it returns, if any, runs after the slot is released and may run more requests. A
// slot is held only while a request is outstanding, and run waits for a slot without holding
// one, so requests never wait on each other's slots.
func (p *pipe) run(call func(c *zk.Conn) (then func() error, err error)) {
	if err := p.r.acquire(p.ctx); err != nil {
		p.fail(err)
		return
	}
	p.wg.Go(func() {
		then, err := call(p.r.conn())
		p.r.release()
		if err == nil && then != nil {
			err = then()
		}
		if err != nil {
			p.fail(err)
		}
	})
}

// wait waits for every request run so far and for those they ran, and returns the first error.
func (p *pipe) wait() error {
	p.wg.Wait()
	p.cancel()
	return p.first
}
