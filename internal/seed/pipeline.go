package seed

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// progressEvery is how often a long phase logs its progress.
const progressEvery = 3 * time.Second

// pipeline runs op(conn, i) for i in [0, n) with at most inflight calls outstanding, spread over
// conns. go-zookeeper calls are synchronous but a connection pipelines the requests of many
// goroutines, so inflight goroutines keep that many requests on the wire. The first error stops
// the phase and is returned; progress is logged every few seconds.
func pipeline(ctx context.Context, log *slog.Logger, phase string, conns []*zk.Conn, inflight, n int,
	op func(ctx context.Context, c *zk.Conn, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var next, done atomic.Int64
	workers := min(inflight, n)
	var wg sync.WaitGroup
	for w := range workers {
		c := conns[w%len(conns)]
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := op(ctx, c, int(i)); err != nil {
					cancel(err)
					return
				}
				done.Add(1)
			}
		})
	}

	start := time.Now()
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			if err := context.Cause(ctx); err != nil {
				return err
			}
			el := time.Since(start)
			log.Info("seed phase done", "phase", phase, "znodes", n, "elapsed", el.Round(time.Millisecond),
				"per_sec", int(float64(n)/max(el.Seconds(), 1e-9)))
			return nil
		case <-tick.C:
			d := done.Load()
			log.Info("seed progress", "phase", phase, "done", d, "total", n,
				"per_sec", int(float64(d)/time.Since(start).Seconds()))
		}
	}
}
