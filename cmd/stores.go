package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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
	// Committed returns the latest committed offset of every partition of each group (a group
	// without commits maps to an empty map; a tombstoned partition is absent).
	Committed(ctx context.Context, groups []string) (map[string]map[migrate.TopicPartition]int64, error)
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

// readExistingLegacy reads those of groups that exist under /consumers; the others are absent
// from the result (a restore may create a group, and a group that does not exist has no live
// consumers and no offsets).
func readExistingLegacy(ctx context.Context, legacy migrate.LegacyStore, groups []string) (map[string]migrate.LegacyGroup, error) {
	all, err := legacy.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list legacy groups: %w", err)
	}
	var names []string
	for _, g := range groups {
		if _, found := slices.BinarySearch(all, g); found {
			names = append(names, g)
		}
	}
	out := make(map[string]migrate.LegacyGroup, len(names))
	if len(names) == 0 {
		return out, nil
	}
	var mu sync.Mutex // the store may call emit from its reader goroutines
	err = legacy.ReadGroups(ctx, names, func(g migrate.LegacyGroup) error {
		mu.Lock()
		defer mu.Unlock()
		out[g.Group] = g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %d legacy groups: %w", len(names), err)
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("read legacy group %q: the store returned nothing for it", n)
		}
	}
	return out, nil
}
