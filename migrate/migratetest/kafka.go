package migratetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// ErrUnknownTopicOrPartition is the per-partition error of a commit to a partition Kafka does
// not have, as the broker's UNKNOWN_TOPIC_OR_PARTITION; like the adapter's, it wraps
// migrate.ErrPartitionMissing.
var ErrUnknownTopicOrPartition = fmt.Errorf("unknown topic or partition: %w", migrate.ErrPartitionMissing)

// CommitRecord is one partition the fake wrote.
type CommitRecord struct {
	Group string
	migrate.Commit
}

// KafkaStore is an in-memory Kafka: a migrate.KafkaState and a migrate.OffsetCommitter over
// the same data, so a commit shows in the next Groups read. Call NewKafkaStore; it is safe for
// concurrent use.
type KafkaStore struct {
	mu         sync.Mutex
	topics     map[string]migrate.TopicInfo
	groups     map[string]migrate.GroupState
	retention  time.Duration
	failKeys   map[migrate.Key]error
	commitErr  error
	readErr    error
	topicsErr  error
	commits    []CommitRecord
	onCommit   func(group string)
	topicCalls int
	groupCalls int
	clusterID  string
}

// SetClusterID sets the id ClusterID answers (none: "", as brokers before 0.10.1).
func (k *KafkaStore) SetClusterID(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.clusterID = id
}

// ClusterID answers as kafkawriter.Client.ClusterID does.
func (k *KafkaStore) ClusterID(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.clusterID, nil
}

var (
	_ migrate.KafkaState      = (*KafkaStore)(nil)
	_ migrate.OffsetCommitter = (*KafkaStore)(nil)
)

// NewKafkaStore returns an empty cluster with Kafka's default offsets retention (7 days).
func NewKafkaStore() *KafkaStore {
	return &KafkaStore{topics: map[string]migrate.TopicInfo{}, groups: map[string]migrate.GroupState{},
		retention: 7 * 24 * time.Hour, failKeys: map[migrate.Key]error{}}
}

// AddTopic creates (or replaces) a topic whose partition i has log range ranges[i].
func (k *KafkaStore) AddTopic(name string, ranges ...migrate.PartitionRange) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ti := migrate.TopicInfo{Exists: true, Partitions: map[int32]migrate.PartitionRange{}}
	for i, r := range ranges {
		ti.Partitions[int32(i)] = r
	}
	k.topics[name] = ti
}

// SetGroup sets a group's state and member count, keeping its commits.
func (k *KafkaStore) SetGroup(group, state string, members int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	g := k.groups[group]
	g.State, g.Members = state, members
	k.groups[group] = g
}

// SetCommitted sets a committed offset directly (as if a consumer had committed it); the
// group is created Empty if it does not exist.
func (k *KafkaStore) SetCommitted(group, topic string, partition int32, offset int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.setCommittedLocked(group, migrate.TopicPartition{Topic: topic, Partition: partition}, offset, "")
}

// setCommittedLocked records a commit and its metadata, kept only when not empty, as Kafka's
// adapter reads it.
func (k *KafkaStore) setCommittedLocked(group string, tp migrate.TopicPartition, offset int64, metadata string) {
	g := k.groups[group]
	if g.State == "" {
		g.State = "Empty"
	}
	if g.Committed == nil {
		g.Committed = map[migrate.TopicPartition]int64{}
	}
	g.Committed[tp] = offset
	if metadata == "" {
		delete(g.Metadata, tp)
	} else {
		if g.Metadata == nil {
			g.Metadata = map[migrate.TopicPartition]string{}
		}
		g.Metadata[tp] = metadata
	}
	k.groups[group] = g
}

// Metadata returns the metadata committed with a group's offset of tp ("" when none).
func (k *KafkaStore) Metadata(group string, tp migrate.TopicPartition) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.groups[group].Metadata[tp]
}

// SetRetention sets what OffsetsRetention returns.
func (k *KafkaStore) SetRetention(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.retention = d
}

// FailPartition makes commits of key fail with err as a per-partition error (nil: clear).
func (k *KafkaStore) FailPartition(key migrate.Key, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err == nil {
		delete(k.failKeys, key)
		return
	}
	k.failKeys[key] = err
}

// FailCommits makes every Commit fail as a whole with err (nil: succeed again).
func (k *KafkaStore) FailCommits(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.commitErr = err
}

// FailReads makes Topics, Groups and OffsetsRetention fail with err (nil: succeed again).
func (k *KafkaStore) FailReads(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.readErr = err
}

// FailTopics makes Topics alone fail with err (nil: succeed again): a describe that fails after
// the group states were read.
func (k *KafkaStore) FailTopics(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.topicsErr = err
}

// OnCommit makes every later Commit call f(group) first, outside the store's lock, so a test
// can change the world (even this store) while a batch is being committed (nil: none).
func (k *KafkaStore) OnCommit(f func(group string)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.onCommit = f
}

// Commits returns every partition written so far, in order.
func (k *KafkaStore) Commits() []CommitRecord {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.commits)
}

// Calls returns how many times Topics was called, and Groups or ActiveGroups.
func (k *KafkaStore) Calls() (topics, groups int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.topicCalls, k.groupCalls
}

// Topics describes the given topics; an unknown one has Exists false.
func (k *KafkaStore) Topics(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.topicCalls++
	if err := cmp.Or(k.readErr, k.topicsErr); err != nil {
		return nil, err
	}
	out := make(map[string]migrate.TopicInfo, len(topics))
	for _, t := range topics {
		ti := k.topics[t]
		ti.Partitions = maps.Clone(ti.Partitions)
		out[t] = ti
	}
	return out, nil
}

// Groups returns the state of each given group; an unknown group has State "".
func (k *KafkaStore) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.groupCalls++
	if k.readErr != nil {
		return nil, k.readErr
	}
	out := make(map[string]migrate.GroupState, len(groups))
	for _, g := range groups {
		s := k.groups[g]
		s.Committed, s.Metadata = maps.Clone(s.Committed), maps.Clone(s.Metadata)
		out[g] = s
	}
	return out, nil
}

// ActiveGroups returns Groups' answer for the active groups, without the committed offsets;
// Calls counts it as a read of groups.
func (k *KafkaStore) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	out, err := k.Groups(ctx, groups)
	for g, s := range out {
		s.Committed, s.Metadata = nil, nil
		out[g] = s
		if !s.Active() {
			delete(out, g)
		}
	}
	return out, err
}

// OffsetsRetention returns the configured retention.
func (k *KafkaStore) OffsetsRetention(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.readErr != nil {
		return 0, k.readErr
	}
	return k.retention, nil
}

// Commit writes the offsets as an admin commit. Like the broker it refuses every partition of
// an active group (error wrapping migrate.ErrGroupActive) and of an unknown topic or partition;
// a partition told to fail fails alone; the others are written and recorded.
func (k *KafkaStore) Commit(ctx context.Context, group string, commits []migrate.Commit) ([]migrate.CommitError, error) {
	k.mu.Lock()
	hook := k.onCommit
	k.mu.Unlock()
	if hook != nil {
		hook(group)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.commitErr != nil {
		return nil, fmt.Errorf("commit group %q: %w", group, k.commitErr)
	}
	state := k.groups[group]
	out := make([]migrate.CommitError, 0, len(commits))
	for _, c := range commits {
		ce := migrate.CommitError{TopicPartition: c.TopicPartition}
		_, known := k.topics[c.Topic].Partitions[c.Partition]
		switch {
		case state.Active():
			ce.Err = fmt.Errorf("commit %s/%s: group is %s with %d members: %w",
				group, c.TopicPartition, state.State, state.Members, migrate.ErrGroupActive)
		case !known:
			ce.Err = fmt.Errorf("commit %s/%s: %w", group, c.TopicPartition, ErrUnknownTopicOrPartition)
		case c.Offset < 0:
			// The broker would store it; a negative offset from the core is always a bug.
			ce.Err = fmt.Errorf("commit %s/%s: negative offset %d", group, c.TopicPartition, c.Offset)
		case k.failKeys[migrate.Key{Group: group, Topic: c.Topic, Partition: c.Partition}] != nil:
			ce.Err = k.failKeys[migrate.Key{Group: group, Topic: c.Topic, Partition: c.Partition}]
		default:
			k.setCommittedLocked(group, c.TopicPartition, c.Offset, c.Metadata)
			k.commits = append(k.commits, CommitRecord{Group: group, Commit: c})
		}
		out = append(out, ce)
	}
	return out, nil
}
