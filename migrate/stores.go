package migrate

import (
	"context"
	"time"
)

// LegacyStore is the legacy (ZooKeeper) offset store as the core needs it.
type LegacyStore interface {
	// ListGroups returns the names of every group under /consumers, sorted.
	ListGroups(ctx context.Context) ([]string, error)
	// ReadGroups reads the given groups and calls emit once per group, in any order, as each
	// completes. Reads of many groups are pipelined by the implementation. A problem with a
	// single znode is reported in that LegacyOffset's Invalid field, never as an error; an
	// error means the read as a whole failed and nothing partial should be trusted.
	ReadGroups(ctx context.Context, groups []string, emit func(LegacyGroup) error) error
}

// KafkaState is the read side of Kafka as the core needs it.
type KafkaState interface {
	// Topics describes the given topics: existence, partitions and their log start and end.
	Topics(ctx context.Context, topics []string) (map[string]TopicInfo, error)
	// Groups returns state, members and committed offsets of each given group.
	Groups(ctx context.Context, groups []string) (map[string]GroupState, error)
	// OffsetsRetention is the broker's offsets.retention.minutes as a duration.
	OffsetsRetention(ctx context.Context) (time.Duration, error)
}

// OffsetCommitter writes offsets into Kafka's offset store through the group coordinator.
type OffsetCommitter interface {
	// Commit writes the offsets of one group as an admin commit (generation -1, no member).
	// The returned slice has one CommitError per requested partition; error is for a failure
	// of the whole group (coordinator unreachable after retries, context cancelled).
	Commit(ctx context.Context, group string, commits []Commit) ([]CommitError, error)
}
