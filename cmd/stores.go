package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

// legacyWriter is the write side of the legacy store (zkreader.Reader implements it): restore
// to ZooKeeper and the cutover marker. It is not part of migrate.LegacyStore because plan, copy
// and verify must never need it.
type legacyWriter interface {
	WriteOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) error
	migrate.LegacyOffsetWriter // dual-commit --reverse: forward only, a compare-and-set per znode
	MarkMigrated(ctx context.Context, group string, data []byte) error
	Marker(ctx context.Context, group string) ([]byte, bool, error)
}

// asLegacyWriter returns the write side of an opened legacy store.
func asLegacyWriter(l migrate.LegacyStore) (legacyWriter, error) {
	if ro, ok := l.(interface{ ReadOnly() string }); ok {
		return nil, errors.New(ro.ReadOnly())
	}
	w, ok := l.(legacyWriter)
	if _, dd := l.(*datadir.Store); dd {
		return nil, errors.New("--zk-data-dir is read-only: writing to ZooKeeper needs --zk and a running ensemble")
	}
	if !ok {
		return nil, fmt.Errorf("the legacy store %T cannot write to ZooKeeper", l)
	}
	return w, nil
}

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
