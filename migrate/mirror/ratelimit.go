package mirror

import (
	"context"
	"math"
	"sync"
	"time"
)

// Limiter is a RateLimiter allowing PerSecond partitions per second on average. A request larger
// than a second's worth is let through at once and delays the next ones instead, so one big
// group is never starved. Create it with NewLimiter.
type Limiter struct {
	perSecond float64
	now       func() time.Time
	mu        sync.Mutex
	next      time.Time // when the next request may start
}

// NewLimiter returns a limiter of perSecond partitions per second (must be > 0).
func NewLimiter(perSecond float64, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{perSecond: perSecond, now: now}
}

// Reserve books n partitions and returns how long the caller must wait before writing them.
func (l *Limiter) Reserve(n int) time.Duration {
	wait, _ := l.reserve(n)
	return wait
}

// reserve books n partitions; cost is how far the booking moved the next start, for giving it
// back.
func (l *Limiter) reserve(n int) (wait, cost time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	start := l.next
	if start.Before(now) {
		start = now
	}
	// Clamped: a float beyond the int64 range converts to an undefined Duration (negative on
	// amd64), which would let every later request through at once.
	cost = time.Duration(math.MaxInt64)
	if ns := float64(n) / l.perSecond * float64(time.Second); ns < float64(math.MaxInt64) {
		cost = time.Duration(ns)
	}
	l.next = start.Add(cost)
	return start.Sub(now), cost
}

// Wait blocks until n partitions may be written, or ctx ends. A booking whose wait ctx cut off
// is given back: those partitions are not written, and must not delay the requests after it.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	d, cost := l.reserve(n)
	err := ctx.Err()
	if d > 0 && err == nil {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
	}
	if err != nil {
		l.mu.Lock()
		l.next = l.next.Add(-cost)
		l.mu.Unlock()
	}
	return err
}
