package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zk2kafka/zk2kafka/migrate"
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

// LeaseOpener takes this instance's place in line for the lease, claiming groups: nil claims
// every group (overlaps every other instance). The caller records who it is in the lease.
type LeaseOpener func(ctx context.Context, groups []string) (migrate.LegacyLease, error)

// Claim is the groups an instance under f claims with its lease; nil claims every group. Only
// an explicit --group list lets disjoint instances run side by side: a regexp may match any
// group later, and under a map that renames, two disjoint lists of legacy groups can still
// write one Kafka group.
func Claim(f migrate.Filter) []string {
	if f.GroupRegex != nil || len(f.Groups) == 0 || f.GroupMap.Renames() {
		return nil
	}
	return slices.Clone(f.Groups)
}

// OpenLease opens the lease claiming Claim(f). Without wait, another instance ahead on
// overlapping groups is an error wrapping migrate.ErrLeaseNotHeld and naming it (the lease is
// closed); with wait, this instance stands by and the loop writes once it holds the lease.
func OpenLease(ctx context.Context, open LeaseOpener, f migrate.Filter, wait bool) (migrate.LegacyLease, error) {
	lease, err := open(ctx, Claim(f))
	if err != nil {
		return nil, err
	}
	if err := refuseStandby(lease, wait); err != nil {
		lease.Close()
		return nil, err
	}
	return lease, nil
}

func refuseStandby(lease migrate.LegacyLease, wait bool) error {
	if held, holder := lease.State(); !held && !wait {
		return fmt.Errorf("dual-commit: %w: another instance on overlapping groups holds it: %s (--wait-for-lease=false)",
			migrate.ErrLeaseNotHeld, holder)
	}
	return nil
}

// Readiness is the rule of /readyz: nil once the first sync of every group is done, every
// watch is set and this instance holds the lease; otherwise every reason it is not ready.
// s is the loop's latest LoopState (the zero value before the first); lease is the lease's
// State, nil when no lease is taken (a dry run). A standby is alive but not ready.
func Readiness(s LoopState, lease func() (held bool, holder string)) error {
	var why []string
	if !s.Synced {
		why = append(why, "the first sync of every group is not done")
	}
	if !s.Armed {
		why = append(why, "the ZooKeeper watches are not all set")
	}
	if lease != nil {
		if held, holder := lease(); !held {
			why = append(why, "standby: the single-writer lease is held by "+holder)
		}
	}
	if len(why) > 0 {
		return errors.New(strings.Join(why, "; "))
	}
	return nil
}
