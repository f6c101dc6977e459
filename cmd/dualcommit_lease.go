package cmd

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// openDualLease takes this instance's place in line for the lease, on the watcher's session.
// With --wait-for-lease=false, another instance ahead on overlapping groups is an error naming
// it; otherwise this instance stands by (the lease logs it) and writes once it holds the lease.
func openDualLease(ctx context.Context, o *dualCommitOptions, w legacy.Watcher) (legacy.Lease, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	owner := zkreader.LeaseOwner{Host: host, PID: os.Getpid(), Start: time.Now().UTC().Truncate(time.Second),
		Selection: o.selection.describe()}
	// An explicit list: disjoint lists may run side by side. Under a map that renames, two
	// disjoint lists of legacy groups can still write one Kafka group: such an instance overlaps
	// every other (no Groups).
	if o.selection.groupRegex == "" && len(o.filter.Groups) > 0 && !o.filter.GroupMap.Renames() {
		owner.Groups = o.filter.Groups
	}
	lease, err := w.OpenLease(ctx, owner)
	if err != nil {
		return nil, err
	}
	if held, holder := lease.State(); !held && !o.waitForLease {
		lease.Close()
		return nil, fmt.Errorf("dual-commit: %w: another instance on overlapping groups holds it: %s (--wait-for-lease=false)",
			migrate.ErrLeaseNotHeld, holder)
	}
	return lease, nil
}

// describe is the selection as flags, as given, for the lease znode and the logs.
func (s *filterOptions) describe() string {
	return migrate.FilterSpec{Groups: s.groups, GroupRegex: s.groupRegex, TopicRegex: s.topicRegex,
		ExcludeGroupRegex: s.excludeRegex}.Flags()
}
