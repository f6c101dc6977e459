package migrate_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// signalBackup is a memBackup safe for the look-ahead's goroutine that closes backedUp once
// group watch was recorded: then its batch is re-checked and decided.
type signalBackup struct {
	mu       sync.Mutex
	mem      memBackup
	watch    string
	backedUp chan struct{}
	once     sync.Once
}

func (b *signalBackup) Record(ctx context.Context, groups []migrate.GroupResult) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.mem.Record(ctx, groups); err != nil {
		return err
	}
	for _, g := range groups {
		if g.Group == b.watch {
			b.once.Do(func() { close(b.backedUp) })
		}
	}
	return nil
}

// TestCopyGatesAgainJustBeforeTheCommit: batch g2 is re-checked, decided and backed up while
// batch g1 is committed; what changes in between must still block g2's commit.
func TestCopyGatesAgainJustBeforeTheCommit(t *testing.T) {
	cases := []struct {
		name   string
		change func(l *migratetest.LegacyStore, k *migratetest.KafkaStore)
		wantG2 map[migrate.TopicPartition]int64
	}{
		{name: "a simple consumer committed past the target",
			change: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetCommitted("g2", "t", 0, 50) },
			wantG2: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 50}},
		{name: "a legacy consumer registered",
			change: func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.SetLive("g2", "ids/c1") }},
		{name: "the kafka group became active",
			change: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("g2", "Stable", 1) }},
		{name: "all at once: committed 50 and a legacy consumer registered",
			change: func(l *migratetest.LegacyStore, k *migratetest.KafkaStore) {
				k.SetCommitted("g2", "t", 0, 50)
				l.SetLive("g2", "ids/c1")
			},
			wantG2: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 50}},
	}
	for _, tc := range cases {
		for _, mode := range []string{"by path", "whole groups", "gates only"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				legacy, kafka := copyFixture(t)
				plan := planFor(t, legacy, kafka)
				backup := &signalBackup{watch: "g2", backedUp: make(chan struct{})}
				kafka.OnCommit(func(group string) {
					if group != "g1" {
						return
					}
					select {
					case <-backup.backedUp:
					case <-time.After(5 * time.Second):
						t.Error("g2 was not backed up ahead while g1 was committed")
					}
					tc.change(legacy, kafka)
				})
				var store migrate.LegacyStore = legacy
				if mode == "whole groups" {
					store = legacyOnly{legacy}
				}
				c := &migrate.Copier{Legacy: store, Kafka: kafka, Committer: kafka, Backup: backup,
					BatchGroups: 1, GatesOnly: mode == "gates only"}
				res, err := c.Run(context.Background(), plan, true)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]migrate.PartitionStatus{"g1/t/0": migrate.StatusWritten, "g1/t/1": migrate.StatusWritten, "g2/t/0": migrate.StatusBlocked}
				if got := statuses(res); !mapsEqual(got, want) {
					t.Errorf("statuses = %v, want %v", got, want)
				}
				if got := committed(t, kafka, "g2"); !mapsEqual(got, tc.wantG2) {
					t.Errorf("g2 in kafka = %v, want %v (as the change left it)", got, tc.wantG2)
				}
				for _, g := range res.Groups {
					for _, p := range g.Partitions {
						if p.Status == migrate.StatusBlocked && !strings.Contains(p.Reason, "just before the commit") {
							t.Errorf("%s/%s/%d: reason %q does not say what changed before the commit", g.Group, p.Topic, p.Partition, p.Reason)
						}
					}
				}
			})
		}
	}
}
