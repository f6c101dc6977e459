package cmd

import (
	"context"
	"os"
	"time"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// openDualLease takes this instance's place in line for the lease, on the watcher's session,
// under the rule of mirror.OpenLease; the lease znode names this process and its selection.
func openDualLease(ctx context.Context, o *dualCommitOptions, w legacy.Watcher) (migrate.LegacyLease, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	owner := zkreader.LeaseOwner{Host: host, PID: os.Getpid(), Start: time.Now().UTC().Truncate(time.Second),
		Selection: o.selection.describe()}
	return mirror.OpenLease(ctx, func(ctx context.Context, groups []string) (migrate.LegacyLease, error) {
		owner.Groups = groups
		return w.OpenLease(ctx, owner)
	}, o.filter, o.waitForLease)
}

// describe is the selection as flags, as given, for the lease znode and the logs.
func (s *filterOptions) describe() string {
	return migrate.FilterSpec{Groups: s.groups, GroupRegex: s.groupRegex, TopicRegex: s.topicRegex,
		ExcludeGroupRegex: s.excludeRegex}.Flags()
}
