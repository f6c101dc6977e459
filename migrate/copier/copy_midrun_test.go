package copier_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
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

func (b *signalBackup) Record(ctx context.Context, groups []copier.GroupResult) error {
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

// gateChanges are what may happen to g2 after its batch was re-checked and before its commit;
// each must block g2, and leave Kafka's g2 as the change left it (wantG2).
var gateChanges = []struct {
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

// TestCopyGatesAgainJustBeforeTheCommit: batch g2 is re-checked, decided and backed up while
// batch g1 is committed; what changes in between must still block g2's commit.
func TestCopyGatesAgainJustBeforeTheCommit(t *testing.T) {
	for _, tc := range gateChanges {
		for _, mode := range recheckModes {
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
				res, err := migratetest.RunCopier(context.Background(), recheckCopier(mode, legacy, kafka, kafka, backup), plan, true)
				if err != nil {
					t.Fatal(err)
				}
				checkG2Blocked(t, res, kafka, tc.wantG2)
				for _, g := range res.Groups {
					for _, p := range g.Partitions {
						if p.Status == copier.StatusBlocked && !strings.Contains(p.Reason, "just before the commit") {
							t.Errorf("%s/%s/%d: reason %q does not say what changed before the commit", g.Group, p.Topic, p.Partition, p.Reason)
						}
					}
				}
			})
		}
	}
}

// stopOnSecondCheck is a context that reports cancellation from its second Err call on. Run's
// first is its check at the batch boundary, so the stop comes after the first batch was handed
// to the writer: Ctrl-C while the batch was being prepared. It never closes Done, so the
// look-ahead's own context (derived from it) is not cancelled.
type stopOnSecondCheck struct {
	context.Context
	calls atomic.Int32
}

func (c *stopOnSecondCheck) Done() <-chan struct{} { return nil }

func (c *stopOnSecondCheck) Err() error {
	if c.calls.Add(1) >= 2 {
		return context.Canceled
	}
	return nil
}

func TestCopyStoppedWhileTheBatchWasPrepared(t *testing.T) {
	legacy, kafka := copyFixture(t)
	plan := planFor(t, legacy, kafka)
	var commitCalls atomic.Int32
	kafka.OnCommit(func(string) { commitCalls.Add(1) })
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: &signalBackup{backedUp: make(chan struct{})}, BatchGroups: 1}
	ctx := &stopOnSecondCheck{Context: context.Background()}
	res, err := migratetest.RunCopier(ctx, c, plan, true)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "copy stopped after 0 of 2 groups:") {
		t.Errorf("err = %v, want the stop at a batch boundary: copy stopped after 0 of 2 groups: context canceled", err)
	}
	if n := commitCalls.Load(); n != 0 {
		t.Errorf("%d commit calls after the stop, want none", n)
	}
	if len(res.Groups) != 0 {
		t.Errorf("result holds %v, want no group (none was written)", res.Groups)
	}
}

// stopDuringCommit commits through the fake, then ends the run's context and answers as the
// writer does when ctx ended after its chunks were accepted: every partition's result and a
// group error. With refuse, nothing is accepted and Kafka becomes unreadable.
// stopDuringCommit stops the run while a commit is on its way: the commit is applied or not,
// and its answer is given or lost to the stop (the context error alone, as kafkawriter returns
// when the run's context ends first); failReads makes the read-back fail too.
type stopDuringCommit struct {
	kafka         *migratetest.KafkaStore
	cancel        context.CancelFunc
	apply, answer bool
	failReads     bool
}

func (s stopDuringCommit) Commit(ctx context.Context, group string, commits []migrate.Commit) ([]migrate.CommitError, error) {
	s.cancel()
	gerr := fmt.Errorf("commit group %q: %w", group, context.Canceled)
	if s.failReads {
		s.kafka.FailReads(errors.New("broker down"))
	}
	var errs []migrate.CommitError
	if s.apply {
		var err error
		if errs, err = s.kafka.Commit(context.WithoutCancel(ctx), group, commits); err != nil {
			return nil, err
		}
	}
	if !s.answer {
		return nil, gerr
	}
	return errs, gerr
}

func TestCopyStoppedDuringTheCommit(t *testing.T) {
	cases := []struct {
		name       string
		committer  stopDuringCommit
		want       copier.PartitionStatus
		wantReason string // in every partition's reason
	}{
		{name: "accepted and answered: read back and reported written",
			committer: stopDuringCommit{apply: true, answer: true}, want: copier.StatusWritten},
		{name: "applied, the answer lost to the stop: read back and reported written",
			committer: stopDuringCommit{apply: true}, want: copier.StatusWritten},
		{name: "not applied, the answer lost to the stop: read back, failed, saying what Kafka holds",
			committer: stopDuringCommit{}, want: copier.StatusFailed, wantReason: "in flight; read back: Kafka holds"},
		{name: "not applied and Kafka unreadable: failed, saying the outcome is unknown",
			committer: stopDuringCommit{failReads: true}, want: copier.StatusFailed, wantReason: "Kafka may hold the target or not"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := copyFixture(t)
			plan := planFor(t, legacy, kafka)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			committer := tc.committer
			committer.kafka, committer.cancel = kafka, cancel
			c := &copier.Copier{Legacy: legacy, Kafka: kafka, Backup: &memBackup{}, Committer: committer}
			res, err := migratetest.RunCopier(ctx, c, plan, true)
			if err != nil {
				t.Fatalf("err = %v, want none: the stop came during the last batch", err)
			}
			want := map[string]copier.PartitionStatus{"g1/t/0": tc.want, "g1/t/1": tc.want, "g2/t/0": tc.want}
			if got := statuses(res); !mapsEqual(got, want) {
				t.Errorf("statuses = %v, want %v", got, want)
			}
			for _, g := range res.Groups {
				for _, p := range g.Partitions {
					if !strings.Contains(p.Reason, tc.wantReason) {
						t.Errorf("%s/%s/%d: reason %q, want it to say %q", g.Group, p.Topic, p.Partition, p.Reason, tc.wantReason)
					}
				}
			}
		})
	}
}

// TestCopyGatesAgainAfterAStalledOutput: the gate of batch k+1 is read with batch k's
// read-back, and batch k's results then go to the output before k+1 is committed. When that
// output stalls (a full stdout pipe, a paused terminal), a commit or a registration made
// meanwhile must still block k+1: a gate older than a moment is read again.
func TestCopyGatesAgainAfterAStalledOutput(t *testing.T) {
	for _, tc := range gateChanges[:2] { // a commit past the target, a registration
		for _, mode := range recheckModes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				legacy, kafka := copyFixture(t)
				plan := planFor(t, legacy, kafka)
				c := recheckCopier(mode, legacy, kafka, kafka, &memBackup{})
				var mu sync.Mutex
				clock := time.Unix(1_700_000_000, 0)
				c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
				c.Progress = func(done int) {
					if done == 2 { // g1's two partitions are out; g2's gate was read with them
						tc.change(legacy, kafka)
						mu.Lock()
						clock = clock.Add(time.Second) // the output stalls, well past a moment
						mu.Unlock()
					}
				}
				res, err := migratetest.RunCopier(context.Background(), c, plan, true)
				if err != nil {
					t.Fatal(err)
				}
				checkG2Blocked(t, res, kafka, tc.wantG2)
			})
		}
	}
}

// checkG2Blocked checks the outcome of a mid-copy change to g2: g1 written, g2 blocked, and
// Kafka holding for g2 what the change left there (wantG2).
func checkG2Blocked(t *testing.T, res copier.Result, kafka *migratetest.KafkaStore, wantG2 map[migrate.TopicPartition]int64) {
	t.Helper()
	want := map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusBlocked}
	if got := statuses(res); !mapsEqual(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if got := committed(t, kafka, "g2"); !mapsEqual(got, wantG2) {
		t.Errorf("g2 in kafka = %v, want %v (as the change left it)", got, wantG2)
	}
}
