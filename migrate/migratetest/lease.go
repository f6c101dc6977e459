package migratetest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LeaseLine is an in-memory line of instances competing for one dual-commit write lease, as
// zkreader.Lease's znodes line up: the first in line holds it, the others stand by. It is safe
// for concurrent use.
type LeaseLine struct {
	mu   sync.Mutex
	line []*Lease
	n    int
}

// NewLeaseLine returns an empty line.
func NewLeaseLine() *LeaseLine { return &LeaseLine{} }

// Lease is one instance's migrate.WriteLease in a LeaseLine.
type Lease struct {
	l      *LeaseLine
	name   string
	held   bool
	closed bool
	gained chan struct{} // closed while held
	holds  map[int]context.CancelFunc
	next   int
}

var _ migrate.WriteLease = (*Lease)(nil)

// Join puts a new instance at the end of the line.
func (l *LeaseLine) Join() *Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	x := &Lease{l: l, name: fmt.Sprintf("fake instance %d", l.n), gained: make(chan struct{}),
		holds: map[int]context.CancelFunc{}}
	l.line = append(l.line, x)
	l.updateLocked()
	return x
}

// updateLocked makes the first in line the holder and every other one a standby.
func (l *LeaseLine) updateLocked() {
	for i, x := range l.line {
		held := i == 0
		switch {
		case held && !x.held:
			close(x.gained)
		case !held && x.held:
			x.endLocked()
		}
		x.held = held
	}
}

// endLocked ends the term: the contexts Hold handed out end before the next holder holds.
func (x *Lease) endLocked() {
	x.held = false
	for n, cancel := range x.holds {
		cancel()
		delete(x.holds, n)
	}
	x.gained = make(chan struct{})
}

// leaveLocked takes x out of the line, ending its term at once if it held.
func (l *LeaseLine) leaveLocked(x *Lease) {
	l.line = slices.DeleteFunc(l.line, func(y *Lease) bool { return y == x })
	if x.held {
		x.endLocked()
	}
	l.updateLocked()
}

// Close gives the lease up: Hold fails from now on and the next in line holds.
func (x *Lease) Close() {
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	if !x.closed {
		x.closed = true
		x.l.leaveLocked(x)
	}
}

// Lose is the instance's session expiring: it stops holding at once and joins the line
// again at its end, as on a new session.
func (x *Lease) Lose() {
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	if x.closed {
		return
	}
	x.l.leaveLocked(x)
	x.l.line = append(x.l.line, x)
	x.l.updateLocked()
}

// Hold implements migrate.WriteLease: the context ends, before the next holder holds, when
// the lease is lost.
func (x *Lease) Hold(ctx context.Context) (context.Context, context.CancelFunc, error) {
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	if !x.held {
		return nil, nil, fmt.Errorf("%w: %s", migrate.ErrLeaseNotHeld, x.reasonLocked())
	}
	wctx, cancel := context.WithCancel(ctx)
	x.next++
	n := x.next
	x.holds[n] = cancel
	return wctx, func() {
		x.l.mu.Lock()
		delete(x.holds, n)
		x.l.mu.Unlock()
		cancel()
	}, nil
}

func (x *Lease) reasonLocked() string {
	if x.closed || len(x.l.line) == 0 {
		return "the lease is closed"
	}
	return "held by " + x.l.line[0].name
}

// Gained implements migrate.WriteLease.
func (x *Lease) Gained() <-chan struct{} {
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	return x.gained
}
