package zkreader

import (
	"context"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
)

// The watcher's events: what a batch of go-zookeeper's events says, and what is done about it.

// handle acts on a batch of events and returns whether every missing watch must be set again
// (rearmAll, which it is given as it stands).
func (run *watchRun) handle(ctx context.Context, evs []zk.Event, lost *watchLost, rearmAll bool) bool {
	f := run.sort(evs, lost)
	if f.expired {
		if ctx.Err() == nil && !rearmAll {
			run.w.r.log.Warn("zookeeper watches lost (session expired): setting them again and re-reading every group")
			run.armed(false)
		}
		run.w.clearArmed() // the session's watches are gone: every one is set afresh
		return true
	}
	if rearmAll {
		return true // every group is re-read once the watches are back
	}
	if lost.readd {
		lost.readd = false
		if err := run.armList(ctx); err != nil {
			run.w.r.log.Warn("zookeeper persistent watch not added again after a reconnect, retrying", "err", err)
			run.armed(false)
			return true
		}
		run.reportAll()
		return false
	}
	if err := run.rearmFired(ctx, f); err != nil {
		run.armed(false)
		return true
	}
	return false
}

// batch is what one batch of events says.
type batch struct {
	expired bool                // the session's watches are lost
	list    bool                // the list of groups changed
	touched map[string][]string // group -> fired paths (one-shot: to arm again)
}

// sort sorts a batch of go-zookeeper's events; lost follows the connection on the fast path.
func (run *watchRun) sort(evs []zk.Event, lost *watchLost) batch {
	f := batch{touched: map[string][]string{}}
	persistent := run.w.persistent.Load()
	for _, ev := range evs {
		switch {
		case ev.Type == zk.EventNotWatching, ev.Type == zk.EventSession && ev.State == zk.StateExpired:
			if ev.Type == zk.EventSession {
				run.w.expiries.Add(1)
			}
			f.expired = true
		case ev.Type == zk.EventSession:
			if persistent {
				lost.session(ev)
			}
		case persistent:
			list, g := run.recursiveTarget(ev)
			f.list = f.list || list
			if g != "" {
				f.touched[g] = append(f.touched[g], ev.Path)
			}
		default:
			// Whatever the group: the set follows the session's watches, and a group
			// dropped from the selection may be selected again.
			run.w.fired(ev)
			if ev.Path == run.w.listPath() {
				f.list = true
			} else if g := run.groupOf(ev.Path); g != "" {
				f.touched[g] = append(f.touched[g], ev.Path)
			}
		}
	}
	return f
}

// rearmFired sets again the one-shot watches that fired (nothing to set on the fast path),
// then reports what changed. An error means some are missing: the caller sets what is missing.
func (run *watchRun) rearmFired(ctx context.Context, f batch) error {
	persistent := run.w.persistent.Load()
	var failed error
	if f.list {
		if !persistent {
			if err := run.armList(ctx); err != nil {
				run.w.r.log.Warn("zookeeper watch of the groups list not set again, setting what is missing", "err", err)
				failed = err
			}
		}
		run.listChanged()
	}
	for _, g := range slices.Sorted(maps.Keys(f.touched)) {
		if !persistent && failed == nil {
			if err := run.armPaths(ctx, f.touched[g]); err != nil {
				run.w.r.log.Warn("zookeeper watch not set again, setting what is missing", "group", g, "err", err)
				failed = err
			}
		}
		run.changed(g)
	}
	return failed
}

// reportAll reports the list and every selected group changed: the watches were set afresh.
func (run *watchRun) reportAll() {
	run.listChanged()
	for _, g := range run.names() {
		run.changed(g)
	}
}
