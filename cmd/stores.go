package cmd

import (
	"context"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// viaTopicOpener opens the migrate.CommittedSource of verify --via-topic on the configured
// Kafka cluster.
type viaTopicOpener func(ctx context.Context, g *globalOptions, d *deps) (migrate.CommittedSource, func(), error)

// legacyOnly is a migrate.KafkaState that knows nothing, for reads of ZooKeeper alone (export
// --from zk, restore --to zk): migrate.ReadInputs then selects and reads the legacy groups
// exactly as plan does without a Kafka connection. Nothing it answers may be used.
type legacyOnly struct{}

func (legacyOnly) Topics(_ context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	out := make(map[string]migrate.TopicInfo, len(topics))
	for _, t := range topics {
		out[t] = migrate.TopicInfo{}
	}
	return out, nil
}

func (legacyOnly) Groups(_ context.Context, groups []string) (map[string]migrate.GroupState, error) {
	out := make(map[string]migrate.GroupState, len(groups))
	for _, g := range groups {
		out[g] = migrate.GroupState{}
	}
	return out, nil
}

func (legacyOnly) OffsetsRetention(context.Context) (time.Duration, error) { return 0, nil }
