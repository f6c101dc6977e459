package mirror

import (
	"context"
)

// leaseState is what a loop remembers about its lease.
type leaseState struct {
	// gained is set while writes were skipped for want of the lease: every group is synced
	// again once it is closed.
	gained <-chan struct{}
}

// holdLease returns the context a write of st's group must use, or false when the lease is not
// held: then nothing is written (st reports no writes), and every group is synced again once
// the lease is gained. A sync without the lease is not a failure: the holder writes.
func (l *loop) holdLease(ctx context.Context, st *GroupStatus) (context.Context, context.CancelFunc, bool) {
	if l.m.Lease == nil {
		return ctx, func() {}, true
	}
	wctx, cancel, err := l.m.Lease.Hold(ctx)
	if err == nil {
		return wctx, cancel, true
	}
	st.Writes = nil
	// The keep-alive is the holder's job: without this, every tick would mark the group due
	// and re-read it. Gaining the lease clears these, so the new holder keeps every group
	// alive at once, as a fresh start does.
	l.keptAlive[st.Group] = l.m.Now()
	if l.lease.gained == nil {
		l.lease.gained = l.m.Lease.Gained()
	}
	return nil, nil, false
}

// mayWrite is a cheap check before the rate-limit wait and the fresh read of a write: a
// standby skips both. The write itself still holds the lease just before it starts.
func (l *loop) mayWrite(ctx context.Context, st *GroupStatus) bool {
	_, cancel, ok := l.holdLease(ctx, st)
	if ok {
		cancel()
	}
	return ok
}

// leaseGained syncs every group again: writes were skipped while another instance held the
// lease (or while this one could not be sure it held it), and Kafka may have moved since.
func (l *loop) leaseGained() {
	l.lease.gained = nil
	clear(l.keptAlive)
	l.remark(l.groups)
}
