package zkreader

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The call queue bounds the calls running at once, lets a call queue more calls without
// blocking (a listing queues the Gets of what it listed), and runs everything queued, also
// after close.
func TestCallsQueue(t *testing.T) {
	cases := []struct {
		name           string
		max, fanout    int
		depth          int
		closeFirst     bool
		wantConcurrent bool // siblings must have run at the same time
	}{
		{name: "one worker runs a whole tree", max: 1, fanout: 3, depth: 4},
		{name: "bounded by max", max: 4, fanout: 4, depth: 3, wantConcurrent: true},
		{name: "more workers than calls", max: 1000, fanout: 2, depth: 3},
		{name: "queued after close still runs", max: 2, fanout: 3, depth: 2, closeFirst: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newCalls(tc.max)
			if tc.closeFirst {
				q.close()
			}
			var (
				wg                 sync.WaitGroup
				ran, running, peak atomic.Int64
			)
			var node func(level int)
			node = func(level int) {
				wg.Add(1)
				q.push(func() {
					defer wg.Done()
					now := running.Add(1)
					for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
					}
					time.Sleep(2 * time.Millisecond) // a request in flight: long enough for siblings to overlap
					ran.Add(1)
					running.Add(-1)
					if level < tc.depth {
						for range tc.fanout {
							node(level + 1) // from a worker: must not block
						}
					}
				})
			}
			node(1)
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("calls still pending after 30s: %d of the tree ran", ran.Load())
			}
			want := int64(0)
			for l, w := 0, int64(1); l < tc.depth; l, w = l+1, w*int64(tc.fanout) {
				want += w
			}
			if ran.Load() != want {
				t.Errorf("ran %d calls, want %d", ran.Load(), want)
			}
			if peak.Load() > int64(tc.max) {
				t.Errorf("%d calls ran at once, max %d", peak.Load(), tc.max)
			}
			if tc.wantConcurrent && peak.Load() < 2 {
				t.Errorf("calls never ran concurrently (peak %d, max %d)", peak.Load(), tc.max)
			}
			q.mu.Lock()
			workers := q.workers
			q.mu.Unlock()
			if workers > tc.max {
				t.Errorf("%d workers started, max %d", workers, tc.max)
			}
		})
	}
}

// After close, idle workers leave once the queue is empty.
func TestCallsCloseStopsWorkers(t *testing.T) {
	q := newCalls(8)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		q.push(wg.Done)
	}
	wg.Wait()
	q.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q.mu.Lock()
		w := q.workers
		q.mu.Unlock()
		if w == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still running 10s after close", w)
		}
		time.Sleep(time.Millisecond)
	}
}
