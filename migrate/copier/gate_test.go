package copier_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// callLog is a KafkaState that records the groups of every Groups call and runs onFold before
// answering a call that asks for g1 and g2 together: the read-back of g1 folded with the gate
// of g2.
type callLog struct {
	*migratetest.KafkaStore
	onFold func()
	mu     sync.Mutex
	calls  []string
}

func (k *callLog) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	sorted := slices.Sorted(slices.Values(groups))
	k.mu.Lock()
	k.calls = append(k.calls, strings.Join(sorted, ","))
	k.mu.Unlock()
	if k.onFold != nil && slices.Equal(sorted, []string{"g1", "g2"}) {
		k.onFold()
	}
	return k.KafkaStore.Groups(ctx, groups)
}

func (k *callLog) count(groups string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, c := range k.calls {
		if c == groups {
			n++
		}
	}
	return n
}

// TestCopyGatesTheNextBatchInTheReadBack: g2's gate just before its commit is read together with
// g1's read-back (one Groups call for both, no gate call of g2 alone), and what changed up to
// that read still blocks g2: a Kafka change made as the folded read is answered, a legacy
// consumer registered during g1's commit.
func TestCopyGatesTheNextBatchInTheReadBack(t *testing.T) {
	cases := []struct {
		name     string
		atFold   func(k *migratetest.KafkaStore)
		atCommit func(l *migratetest.LegacyStore)
		blocked  bool
		wantG2   map[migrate.TopicPartition]int64
	}{
		{name: "nothing changed: g2 is written", wantG2: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 30}},
		{name: "a simple consumer committed past the target", blocked: true,
			atFold: func(k *migratetest.KafkaStore) { k.SetCommitted("g2", "t", 0, 50) },
			wantG2: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 50}},
		{name: "the kafka group became active", blocked: true,
			atFold: func(k *migratetest.KafkaStore) { k.SetGroup("g2", "Stable", 1) }},
		{name: "a legacy consumer registered", blocked: true,
			atCommit: func(l *migratetest.LegacyStore) { l.SetLive("g2", "ids/c1") }},
	}
	for _, tc := range cases {
		for _, mode := range recheckModes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				legacy, store := copyFixture(t)
				plan := planFor(t, legacy, store)
				kafka := &callLog{KafkaStore: store}
				if tc.atFold != nil {
					kafka.onFold = func() { tc.atFold(store) }
				}
				backup := &signalBackup{watch: "g2", backedUp: make(chan struct{})}
				store.OnCommit(func(group string) {
					if group == "g1" && tc.atCommit != nil {
						// After g2 was re-checked and backed up: otherwise its own re-check
						// (two look-ahead stages may still be running it) sees the change first.
						<-backup.backedUp
						tc.atCommit(legacy)
					}
				})
				res, err := migratetest.RunCopier(context.Background(), recheckCopier(mode, legacy, kafka, store, backup), plan, true)
				if err != nil {
					t.Fatal(err)
				}
				wantG2 := copier.StatusWritten
				if tc.blocked {
					wantG2 = copier.StatusBlocked
				}
				want := map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusWritten, "g2/t/0": wantG2}
				if got := statuses(res); !mapsEqual(got, want) {
					t.Errorf("statuses = %v, want %v", got, want)
				}
				if got := committed(t, store, "g2"); !mapsEqual(got, tc.wantG2) {
					t.Errorf("g2 in kafka = %v, want %v", got, tc.wantG2)
				}
				if n := kafka.count("g1,g2"); n != 1 {
					t.Errorf("%d Groups calls for g1 and g2 together, want 1 (g1's read-back with g2's gate); calls %v", n, kafka.calls)
				}
				// g2 alone: its re-check, and its read-back when it was written; never a gate of its own.
				wantAlone := 1
				if !tc.blocked {
					wantAlone = 2
				}
				if n := kafka.count("g2"); n != wantAlone {
					t.Errorf("%d Groups calls for g2 alone, want %d; calls %v", n, wantAlone, kafka.calls)
				}
			})
		}
	}
}

// failG2Later fails every Groups call that includes g2 once failing is set.
type failG2Later struct {
	*migratetest.KafkaStore
	mu      sync.Mutex
	failing bool
}

func (k *failG2Later) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	k.mu.Lock()
	failing := k.failing
	k.mu.Unlock()
	if failing && slices.Contains(groups, "g2") {
		return nil, errors.New("broker refused g2")
	}
	return k.KafkaStore.Groups(ctx, groups)
}

// TestCopyFoldedReadFailing: when the folded read fails because of the next batch's group, the
// batch just committed is still read back alone (written), and the next batch is gated on its
// own, whose failure stops the run before its commit.
func TestCopyFoldedReadFailing(t *testing.T) {
	legacy, store := copyFixture(t)
	plan := planFor(t, legacy, store)
	kafka := &failG2Later{KafkaStore: store}
	store.OnCommit(func(group string) {
		if group == "g1" {
			kafka.mu.Lock()
			kafka.failing = true
			kafka.mu.Unlock()
		}
	})
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: store,
		Backup: &signalBackup{backedUp: make(chan struct{})}, BatchGroups: 1}
	res, err := migratetest.RunCopier(context.Background(), c, plan, true)
	if err == nil || !strings.Contains(err.Error(), "re-check just before the commit") || !strings.Contains(err.Error(), "broker refused g2") {
		t.Errorf("err = %v, want g2's own gate to fail with the broker's refusal", err)
	}
	want := map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusFailed}
	if got := statuses(res); !mapsEqual(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if got := committed(t, store, "g2"); len(got) != 0 {
		t.Errorf("g2 in kafka = %v, want nothing committed", got)
	}
}
