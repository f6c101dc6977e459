package migrate

import (
	"context"
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
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	start := l.next
	if start.Before(now) {
		start = now
	}
	l.next = start.Add(time.Duration(float64(n) / l.perSecond * float64(time.Second)))
	return start.Sub(now)
}

// Wait blocks until n partitions may be written, or ctx ends.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	d := l.Reserve(n)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
