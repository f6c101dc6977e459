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
