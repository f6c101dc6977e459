package migratetest_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// The fakes run the same contract suites as zkreader and kafkawriter do on the real stack
// (their contract_stack_test.go): a fake that fails one is fixed, not the suite.

func TestLegacyStoreContract(t *testing.T) {
	contract.TestLegacyStore(t, func(t *testing.T) (migrate.LegacyStore, contract.Legacy) {
		s := migratetest.NewLegacyStore()
		return s, &fakeLegacy{s: s}
	})
}

func TestLegacyRecheckerContract(t *testing.T) {
	contract.TestLegacyRechecker(t, func(t *testing.T) (migrate.LegacyRechecker, contract.Legacy) {
		s := migratetest.NewLegacyStore()
		return s, &fakeLegacy{s: s}
	})
}

func TestLegacyOffsetWriterContract(t *testing.T) {
	contract.TestLegacyOffsetWriter(t, func(t *testing.T) (migrate.LegacyOffsetWriter, contract.Legacy) {
		s := migratetest.NewLegacyStore()
		return s, &fakeLegacy{s: s}
	})
}

func TestLegacyWatcherContract(t *testing.T) {
	contract.TestLegacyWatcher(t, func(t *testing.T) contract.WatcherSetup {
		s := migratetest.NewLegacyStore()
		w := s.Watcher()
		return contract.WatcherSetup{Watcher: w, Legacy: &fakeLegacy{s: s},
			Expire: func(_ *testing.T, during func()) { w.ExpireSession(during) }}
	})
}

func TestKafkaStateContract(t *testing.T) {
	contract.TestKafkaState(t, func(t *testing.T) (migrate.KafkaState, contract.Kafka) {
		k := migratetest.NewKafkaStore()
		return k, newFakeKafka(k)
	})
}

func TestOffsetCommitterContract(t *testing.T) {
	contract.TestOffsetCommitter(t, func(t *testing.T) (migrate.OffsetCommitter, contract.Kafka) {
		k := migratetest.NewKafkaStore()
		return k, newFakeKafka(k)
	})
}

// fakeLegacy arranges a fake LegacyStore through its setters, as contract.Legacy asks.
type fakeLegacy struct{ s *migratetest.LegacyStore }

func (f *fakeLegacy) exists(group string) bool {
	names, err := f.s.ListGroups(t0())
	if err != nil {
		panic(err)
	}
	return slices.Contains(names, group)
}

func (f *fakeLegacy) CreateGroup(t testing.TB, group string) {
	if !f.exists(group) {
		f.s.SetGroup(migrate.LegacyGroup{Group: group})
	}
}

func (f *fakeLegacy) SetOffset(t testing.TB, group, topic string, partition int32, offset int64) {
	f.s.SetOffset(group, topic, partition, offset)
}

func (f *fakeLegacy) SetBad(t testing.TB, group, topic string, partition int32, bad contract.Bad) {
	o := migrate.LegacyOffset{Topic: topic, Partition: partition, Invalid: "fake: " + bad.String()}
	switch bad {
	case contract.BadLegacyName:
		o.Partition = -1
		o.Path = fmt.Sprintf("/consumers/%s/offsets/%s/0-%d", group, topic, partition)
	case contract.Padded:
		o.Offset, o.Invalid, o.Note = contract.PaddedOffset, "", "fake: whitespace around the offset"
	}
	f.s.PutOffset(group, o)
}

func (f *fakeLegacy) DeleteOffset(t testing.TB, group, topic string, partition int32) {
	f.s.DeleteOffset(group, topic, partition)
}

func (f *fakeLegacy) DeleteGroup(t testing.TB, group string) { f.s.DeleteGroup(group) }

func (f *fakeLegacy) Register(t testing.TB, group, id string, owned ...migrate.TopicPartition) func() {
	regs := []string{"ids/" + id}
	for _, o := range owned {
		regs = append(regs, fmt.Sprintf("owners/%s/%d=%s-0", o.Topic, o.Partition, id))
	}
	f.s.SetLive(group, append(f.live(group), regs...)...)
	return func() {
		f.s.SetLive(group, slices.DeleteFunc(f.live(group), func(r string) bool { return slices.Contains(regs, r) })...)
	}
}

func (f *fakeLegacy) live(group string) []string {
	gs, err := f.s.RecheckGroups(t0(), []migrate.RecheckRequest{{Group: group}})
	if err != nil {
		panic(err)
	}
	return gs[0].LiveConsumers
}

// Read renders a valid offset as its decimal, an invalid one by its reason: what matters to
// the suite is whether it changed.
func (f *fakeLegacy) Read(t testing.TB, group, topic string, partition int32) (string, bool) {
	var out []migrate.LegacyOffset
	err := f.s.ReadGroups(t0(), []string{group}, func(g migrate.LegacyGroup) error { out = g.Offsets; return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Topic == topic && o.Partition == partition {
			if o.Invalid != "" {
				return "invalid: " + o.Invalid, true
			}
			return strconv.FormatInt(o.Offset, 10), true
		}
	}
	return "", false
}

func (f *fakeLegacy) GroupExists(t testing.TB, group string) bool { return f.exists(group) }

// fakeKafka arranges a fake KafkaStore through its setters, as contract.Kafka asks: it keeps
// each topic's log ranges itself and sets them whole.
type fakeKafka struct {
	k      *migratetest.KafkaStore
	n      atomic.Int64
	ranges map[string][]migrate.PartitionRange
}

func newFakeKafka(k *migratetest.KafkaStore) *fakeKafka {
	return &fakeKafka{k: k, ranges: map[string][]migrate.PartitionRange{}}
}

func (f *fakeKafka) name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, f.n.Add(1)) }

func (f *fakeKafka) Topic(t testing.TB, partitions int32) string {
	name := f.name("topic")
	f.ranges[name] = make([]migrate.PartitionRange, partitions)
	f.k.AddTopic(name, f.ranges[name]...)
	return name
}

func (f *fakeKafka) MissingTopic(t testing.TB) string { return f.name("missing") }
func (f *fakeKafka) Group(t testing.TB) string        { return f.name("group") }

func (f *fakeKafka) Produce(t testing.TB, topic string, partition int32, n int) {
	f.ranges[topic][partition].LogEnd += int64(n)
	f.k.AddTopic(topic, f.ranges[topic]...)
}

func (f *fakeKafka) DeleteRecords(t testing.TB, topic string, partition int32, before int64) {
	f.ranges[topic][partition].LogStart = before
	f.k.AddTopic(topic, f.ranges[topic]...)
}

func (f *fakeKafka) Commit(t testing.TB, group string, offsets map[migrate.TopicPartition]int64) {
	for tp, off := range offsets {
		f.k.SetCommitted(group, tp.Topic, tp.Partition, off)
	}
}

func (f *fakeKafka) Committed(t testing.TB, group string) map[migrate.TopicPartition]contract.Committed {
	gs, err := f.k.Groups(t0(), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	out := map[migrate.TopicPartition]contract.Committed{}
	for tp, off := range gs[group].Committed {
		out[tp] = contract.Committed{Offset: off, Metadata: f.k.Metadata(group, tp)}
	}
	return out
}

func (f *fakeKafka) Join(t testing.TB, group, topic string) func() {
	f.k.SetGroup(group, "Stable", 1)
	return func() { f.k.SetGroup(group, "Empty", 0) }
}

func (f *fakeKafka) Retention() time.Duration { return 7 * 24 * time.Hour }

func t0() context.Context { return context.Background() }

func TestWriteLeaseContract(t *testing.T) {
	contract.TestWriteLease(t, func(t *testing.T) contract.LeaseSetup {
		line := migratetest.NewLeaseLine()
		return contract.LeaseSetup{Open: func(t *testing.T) contract.Contender {
			l := line.Join()
			t.Cleanup(l.Close)
			return contract.Contender{Lease: l, Close: l.Close, Cut: l.Lose}
		}}
	})
}

func TestTranslatorContract(t *testing.T) {
	tps := []migrate.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "unreplicated", Partition: 0}}
	tr := migratetest.Translator{Prefix: "src.", Start: map[migrate.TopicPartition]int64{tps[0]: 0, tps[1]: 7},
		Behind: map[migrate.TopicPartition]int64{tps[1]: 20}}
	contract.TestTranslator(t, tr, tps, 30)
}
