package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// writableLegacy is the in-memory legacy store with the write side zkreader.Reader has.
type writableLegacy struct {
	*migratetest.LegacyStore
	mu       sync.Mutex
	markers  map[string][]byte
	writes   int
	writeErr error
}

func newWritableLegacy(l *migratetest.LegacyStore) *writableLegacy {
	return &writableLegacy{LegacyStore: l, markers: map[string][]byte{}}
}

func (w *writableLegacy) WriteOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writeErr != nil {
		return w.writeErr
	}
	for tp, off := range offsets {
		w.SetOffset(group, tp.Topic, tp.Partition, off)
		w.writes++
	}
	return nil
}

func (w *writableLegacy) MarkMigrated(ctx context.Context, group string, data []byte) error {
	groups, err := w.ListGroups(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(groups, group) {
		return fmt.Errorf("mark group %q migrated: no such group", group)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writeErr != nil {
		return w.writeErr
	}
	w.markers[group] = bytes.Clone(data)
	return nil
}

func (w *writableLegacy) Marker(_ context.Context, group string) ([]byte, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.markers[group]
	return d, ok, nil
}

func (w *writableLegacy) writeCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// writableStores opens the writable legacy fake and the Kafka fake; kafkaErr makes OpenKafka fail.
type writableStores struct {
	legacy   *writableLegacy
	kafka    *migratetest.KafkaStore
	kafkaErr error
}

func (s writableStores) OpenLegacy(_ context.Context, g *globalOptions, _ *deps) (*legacy.Source, error) {
	return staticSource(s.legacy, g), nil
}

func (s writableStores) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	if s.kafkaErr != nil {
		return nil, nil, s.kafkaErr
	}
	return s.kafka, func() {}, nil
}

// writableFixture is fixture() with the write side: g1 t/0 zk 10 (Kafka none), t/1 zk 20
// (Kafka 30), g2 t/0 zk 5 (Kafka none); topic t has two partitions, log end 100.
func writableFixture() writableStores {
	f := fixture()
	return writableStores{legacy: newWritableLegacy(f.legacy), kafka: f.kafka}
}

// runWith runs the command line over stores, after setup has adjusted the deps.
func runWith(t *testing.T, stores storeOpener, setup func(*deps), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	d := defaultDeps(&out, &errb)
	d.stores = stores
	if setup != nil {
		setup(d)
	}
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), exitCode(err)
}

// fakeSource is a migrate.CommittedSource over fixed answers, for --via-topic.
type fakeSource struct {
	committed map[string]map[migrate.TopicPartition]int64
	err       error
}

func (s fakeSource) Committed(_ context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if s.err != nil {
		return nil, s.err
	}
	out := map[string]migrate.GroupState{}
	for _, g := range groups {
		if c, ok := s.committed[g]; ok {
			out[g] = migrate.GroupState{Committed: c}
		}
	}
	return out, nil
}

var errBoom = errors.New("boom")

// staticSource is a legacy source over a fake store, writable when the fake is, named by the
// --zk of the command line as a real ensemble would be.
func staticSource(store migrate.LegacyStore, g *globalOptions) *legacy.Source {
	w, _ := store.(migrate.LegacyWriter)
	s := legacy.NewStatic(store, w)
	s.Identity, s.Where = legacy.EnsembleIdentity(g.zkServers)
	return s
}
