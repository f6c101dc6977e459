package migrate

import (
	"context"
	"time"
)

// NoKafka is a KafkaState that knows nothing, for reads of the legacy store alone (export
// --from zk, restore --to zk): ReadInputs then selects and reads the legacy groups exactly as
// plan does, without a Kafka connection. Every topic and group asked is in its answers, empty,
// so nothing it answers may be used: not a topic's existence, not a group's commits.
type NoKafka struct{}

var _ KafkaState = NoKafka{}

// Topics answers every topic, as one Kafka knows nothing of.
func (NoKafka) Topics(_ context.Context, topics []string) (map[string]TopicInfo, error) {
	out := make(map[string]TopicInfo, len(topics))
	for _, t := range topics {
		out[t] = TopicInfo{}
	}
	return out, nil
}

// Groups answers every group with the zero GroupState.
func (NoKafka) Groups(_ context.Context, groups []string) (map[string]GroupState, error) {
	out := make(map[string]GroupState, len(groups))
	for _, g := range groups {
		out[g] = GroupState{}
	}
	return out, nil
}

// ActiveGroups answers that no group is active.
func (NoKafka) ActiveGroups(context.Context, []string) (map[string]GroupState, error) {
	return map[string]GroupState{}, nil
}

// OffsetsRetention is 0: unknown.
func (NoKafka) OffsetsRetention(context.Context) (time.Duration, error) { return 0, nil }
