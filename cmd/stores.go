package cmd

import (
	"context"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// committedSource reads groups' committed offsets some other way than OffsetFetch:
// `migrate verify --via-topic` decodes __consumer_offsets itself (package offsetlog).
type committedSource interface {
	// Committed returns the latest commit of every partition of each group, in the Committed
	// and Metadata fields of a GroupState (a group without commits has an empty Committed; a
	// tombstoned partition is absent).
	Committed(ctx context.Context, groups []string) (map[string]migrate.GroupState, error)
}

// viaTopicOpener opens a committedSource on the configured Kafka cluster.
type viaTopicOpener func(ctx context.Context, g *globalOptions, d *deps) (committedSource, func(), error)
