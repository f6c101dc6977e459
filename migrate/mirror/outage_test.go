package mirror_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// errOutage stands for whatever the Kafka adapter returns while the broker is down.
var errOutage = errors.New("kafka: client has run out of available brokers to talk to")

// TestStatusTrueDuringKafkaOutage: while Kafka cannot be read or written, every ZooKeeper
// change is still reported with the lag measured against Kafka's last acknowledged commit, so
// the lag rises as the legacy consumers keep committing, and the writes the mirror could not
// make are reported failed (with the cause), not left out. The instance stays ready and its
// heartbeat keeps going (the readiness decision, docs/design.md). Once Kafka is back, the
// retry writes the newest offset and the lag falls to 0.
func TestStatusTrueDuringKafkaOutage(t *testing.T) {
	cases := []struct {
		name string
		fail func(k *migratetest.KafkaStore, err error) // err nil: recover
	}{
		{name: "broker down: every read and commit fails", fail: func(k *migratetest.KafkaStore, err error) {
			k.FailReads(err)
			k.FailCommits(err)
		}},
		{name: "coordinator down: group reads work, commits fail", fail: func(k *migratetest.KafkaStore, err error) {
			k.FailCommits(err)
		}},
		{name: "metadata fails: the topics cannot be described", fail: func(k *migratetest.KafkaStore, err error) {
			k.FailTopics(err)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture()
				f.m.PollInterval = 2 * time.Second
				f.legacy.SetOffset("g", "t", 0, 10)
				f.start(t)
				if s := f.obs.next(t, "g"); s.Lag != 0 || s.Written() != 1 {
					t.Fatalf("first sync: lag %d, %d written; want 0 and 1: %+v", s.Lag, s.Written(), s)
				}
				synctest.Wait()
				f.obs.drain()

				c.fail(f.kafka, errOutage)
				for _, zk := range []int64{25, 40, 70} { // the legacy consumer keeps committing
					f.legacy.SetOffset("g", "t", 0, zk)
					f.watch.fire(t, "g")
					time.Sleep(time.Second)
					synctest.Wait()
					s := lastOf(t, f.obs.drain(), "g")
					if s.Lag != zk-10 {
						t.Errorf("ZooKeeper at %d, Kafka's last commit 10: lag %d, want %d", zk, s.Lag, zk-10)
					}
					if n := failedTo(s, zk); n != 1 {
						t.Errorf("ZooKeeper at %d: %d failed writes of t/0 to %d wrapping the outage's error, want 1: %+v", zk, n, zk, s.Writes)
					}
					if s.Written() != 0 {
						t.Errorf("ZooKeeper at %d: %d writes reported done during the outage", zk, s.Written())
					}
					if err := mirror.Readiness(f.obs.latest(), nil); err != nil {
						t.Errorf("not ready during the Kafka outage: %v", err)
					}
					if beat := f.obs.latest().Beat; time.Since(beat) > f.m.PollInterval {
						t.Errorf("heartbeat %s old during the Kafka outage", time.Since(beat))
					}
				}

				c.fail(f.kafka, nil)
				time.Sleep(2 * time.Minute) // the retries' backoff is at most 64 poll intervals
				synctest.Wait()
				s := lastOf(t, f.obs.drain(), "g")
				if s.Lag != 0 {
					t.Errorf("after Kafka came back: lag %d, want 0", s.Lag)
				}
				if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 70 {
					t.Errorf("after Kafka came back: Kafka at %d, want 70", got)
				}
			})
		})
	}
}

// TestStatusOutageFromTheStart: a group never read from Kafka (it was down from the start)
// has no last acknowledged commit to measure a lag against: it is reported missing, its write
// failed, and the instance is not ready (its first sync is not done).
func TestStatusOutageFromTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.m.PollInterval = 2 * time.Second
		f.legacy.SetOffset("g", "t", 0, 10)
		f.kafka.SetRetention(time.Hour) // read before the outage: the mirror cannot start without it
		f.m.KeepaliveInterval = time.Hour
		f.kafka.FailReads(errOutage)
		f.start(t)
		time.Sleep(time.Second)
		synctest.Wait()
		s := lastOf(t, f.obs.drain(), "g")
		if s.Missing != 1 || s.Lag != 0 || failedTo(s, 10) != 1 {
			t.Errorf("missing %d, lag %d, writes %+v; want 1 missing, lag 0, one failed write to 10", s.Missing, s.Lag, s.Writes)
		}
		if err := mirror.Readiness(f.obs.latest(), nil); err == nil {
			t.Error("ready although no group was ever synced with Kafka")
		}
		f.kafka.FailReads(nil)
	})
}

// lastOf returns the last status of group among ss.
func lastOf(t *testing.T, ss []mirror.GroupStatus, group string) mirror.GroupStatus {
	t.Helper()
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Group == group {
			return ss[i]
		}
	}
	t.Fatalf("no status of group %s reported (%d statuses of other groups)", group, len(ss))
	return mirror.GroupStatus{}
}

// failedTo counts the failed writes of t/0 to offset to whose error wraps errOutage.
func failedTo(s mirror.GroupStatus, to int64) int {
	n := 0
	for _, w := range s.Writes {
		if w.TopicPartition == (migrate.TopicPartition{Topic: "t", Partition: 0}) && w.To == to && errors.Is(w.Err, errOutage) {
			n++
		}
	}
	return n
}

// slowKafka is a Kafka whose reads, while down, take the adapter's whole retry budget (30 s) to
// fail, unless their context ends first, and succeed as soon as it is back: a broker that
// refuses connections, as kafkawriter retries it.
type slowKafka struct {
	*migratetest.KafkaStore
	down atomic.Bool
}

func (k *slowKafka) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if err := k.reach(ctx); err != nil {
		return nil, err
	}
	return k.KafkaStore.Groups(ctx, groups)
}

func (k *slowKafka) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if err := k.reach(ctx); err != nil {
		return nil, err
	}
	return k.KafkaStore.ActiveGroups(ctx, groups)
}

// reach returns once Kafka is up, or fails as the adapter does while it is down.
func (k *slowKafka) reach(ctx context.Context) error {
	budget := time.After(30 * time.Second)
	for k.down.Load() { // tried again every 500 ms, as the adapter's backoff does
		select {
		case <-ctx.Done():
			return ctx.Err() // as kafkawriter does between its calls
		case <-budget:
			return errOutage
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil
}

// TestLagFollowsEveryChangeDuringOutage: while Kafka is down, a read does not hold the loop for
// the adapter's whole retry budget once Kafka is known down, so each ZooKeeper change is
// reported, with its lag, within two poll intervals; a group that does not change is not read
// again at every poll (its retries back off); and once Kafka answers again every group is
// synced at once, not at the end of its backoff.
func TestLagFollowsEveryChangeDuringOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		k := &slowKafka{KafkaStore: f.kafka}
		f.m.Kafka = k
		f.m.PollInterval = 2 * time.Second
		f.legacy.SetOffset("g", "t", 0, 10)
		f.legacy.SetOffset("idle", "t", 0, 5)
		f.start(t)
		synctest.Wait()
		f.obs.drain()

		k.down.Store(true)
		f.kafka.FailCommits(errOutage)
		time.Sleep(time.Minute) // the first failure takes the whole budget; Kafka is known down after it
		synctest.Wait()
		f.obs.drain()
		reads := f.legacy.ReadCalls()
		for i, zk := range []int64{20, 30, 40, 50, 60} {
			f.legacy.SetOffset("g", "t", 0, zk)
			f.watch.fire(t, "g")
			// At most two reads of a poll interval each: one under way (another group's retry),
			// then this group's.
			time.Sleep(2*f.m.PollInterval + time.Second)
			synctest.Wait()
			s := lastOf(t, f.obs.drain(), "g")
			if s.Lag != zk-10 || s.KafkaErr == nil || !errors.Is(s.KafkaErr, errOutage) {
				t.Fatalf("change %d (ZooKeeper at %d): lag %d, KafkaErr %v; want lag %d reported within two poll intervals, the outage's error",
					i, zk, s.Lag, s.KafkaErr, zk-10)
			}
		}
		time.Sleep(2 * time.Minute) // idle: no change, retries back off
		synctest.Wait()
		if n := f.legacy.ReadCalls() - reads; n > 30 {
			t.Errorf("%d ZooKeeper reads in the outage's 2m25s (5 changes, 2 groups), want retries that back off (at most 30)", n)
		}

		k.down.Store(false)
		f.kafka.FailCommits(nil)
		time.Sleep(3 * f.m.PollInterval)
		synctest.Wait()
		if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 60 {
			t.Errorf("Kafka at %d three poll intervals after it came back, want 60", got)
		}
	})
}

// syncedOutageFixture is a mirror whose Kafka reads and commits can be made to hang until their
// budget runs out (slowKafka, slowCommitter), polling every 2 s, with group g's offset 10 synced
// and the observations so far drained. Call it inside synctest.Test.
func syncedOutageFixture(t *testing.T) (*fixture, *slowKafka, *slowCommitter) {
	f := newFixture()
	k := &slowKafka{KafkaStore: f.kafka}
	c := &slowCommitter{OffsetCommitter: f.kafka}
	f.m.Kafka, f.m.Committer = k, c
	f.m.PollInterval = 2 * time.Second
	f.legacy.SetOffset("g", "t", 0, 10)
	f.start(t)
	synctest.Wait()
	f.obs.drain()
	return f, k, c
}

// TestLagRisesDuringTheOutagesFirstCall: the first read or commit after Kafka went away takes
// the adapter's whole retry budget to fail (Kafka is not known down yet), and the loop waits for
// it. The lag still follows the legacy commits made meanwhile, within a poll interval, measured
// against Kafka's last acknowledged commit, before that call fails.
func TestLagRisesDuringTheOutagesFirstCall(t *testing.T) {
	for _, stuck := range []string{"read", "commit"} {
		t.Run(stuck, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, k, c := syncedOutageFixture(t)
				c.down.Store(true)
				k.down.Store(stuck == "read")
				f.legacy.SetOffset("g", "t", 0, 25)
				f.watch.fire(t, "g")
				for _, zk := range []int64{25, 40, 55} { // well inside the call's 30 s budget
					f.legacy.SetOffset("g", "t", 0, zk)
					time.Sleep(f.m.PollInterval + time.Second)
					synctest.Wait()
					if lag, ok := f.obs.legacyLag("g"); !ok || lag != zk-10 {
						t.Errorf("lag while the first %s of the outage waits: %d (reported %v), want %d (ZooKeeper %d, Kafka's last commit 10)",
							stuck, lag, ok, zk-10, zk)
					}
				}
				// The call fails at the end of its budget: the sync's report must not take the
				// lag back to the batch's own, older read (25).
				time.Sleep(30 * time.Second)
				synctest.Wait()
				for _, s := range f.obs.drain() {
					if s.Group == "g" && s.Lag < 45 {
						t.Errorf("after the first %s failed: a report of lag %d, below the 45 reported while it waited", stuck, s.Lag)
					}
				}
				k.down.Store(false)
				c.down.Store(false)
			})
		})
	}
}

// slowCommitter is a committer whose commits, while down, take the adapter's whole retry budget
// (30 s) to fail, unless their context ends first.
type slowCommitter struct {
	migrate.OffsetCommitter
	down atomic.Bool
}

func (c *slowCommitter) Commit(ctx context.Context, group string, cs []migrate.Commit) ([]migrate.CommitError, error) {
	if c.down.Load() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return nil, errOutage
		}
	}
	return c.OffsetCommitter.Commit(ctx, group, cs)
}

// TestCommitFailureMarksKafkaDown: an outage that starts between a sync's read of Kafka and its
// commit costs the commit's whole budget once; the commit's failure marks Kafka down, so the
// next change is reported within two poll intervals, not after another read's whole budget.
func TestCommitFailureMarksKafkaDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, k, c := syncedOutageFixture(t)

		c.down.Store(true) // the broker goes away after the sync's read
		f.legacy.SetOffset("g", "t", 0, 20)
		f.watch.fire(t, "g")
		time.Sleep(time.Second)
		k.down.Store(true)
		time.Sleep(30 * time.Second) // the commit's budget
		synctest.Wait()
		if s := lastOf(t, f.obs.drain(), "g"); s.Lag != 10 || s.Written() != 0 {
			t.Fatalf("after the failed commit: lag %d, %d written; want 10 and none", s.Lag, s.Written())
		}
		f.legacy.SetOffset("g", "t", 0, 30)
		f.watch.fire(t, "g")
		time.Sleep(2*f.m.PollInterval + time.Second)
		synctest.Wait()
		if s := lastOf(t, f.obs.drain(), "g"); s.Lag != 20 || s.KafkaErr == nil {
			t.Errorf("the change after the failed commit: lag %d, KafkaErr %v; want lag 20 reported within two poll intervals", s.Lag, s.KafkaErr)
		}
		k.down.Store(false)
		c.down.Store(false)
	})
}

// refusingGroup is a Kafka whose group-state read fails as a whole whenever it asks for group
// bad, as kafkawriter's does when one group's coordinator refuses (an ACL, a coordinator
// without a leader): an error of that group, not an outage of Kafka.
type refusingGroup struct {
	*migratetest.KafkaStore
	bad string
	err error
}

func (k refusingGroup) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if slices.Contains(groups, k.bad) {
		return nil, k.err
	}
	return k.KafkaStore.Groups(ctx, groups)
}

func (k refusingGroup) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if slices.Contains(groups, k.bad) {
		return nil, k.err
	}
	return k.KafkaStore.ActiveGroups(ctx, groups)
}

// TestOneGroupsFailureIsNotAnOutage: a group whose Kafka read keeps failing for a reason of
// its own does not make Kafka "down": the groups synced after it in the same pass are read and
// mirrored as usual. (Taken for an outage, it cut every later batch short at every pass, and
// the other groups were never mirrored.)
func TestOneGroupsFailureIsNotAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.m.PollInterval = 2 * time.Second
		f.m.BatchGroups = 1 // "a" alone in the first batch, "b" in the next
		f.m.Kafka = refusingGroup{KafkaStore: f.kafka, bad: "a",
			err: errors.New("kafka server: the client is not authorized to access this group")}
		f.legacy.SetOffset("a", "t", 0, 10)
		f.legacy.SetOffset("b", "t", 0, 20)
		stop := f.start(t)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := kafkaOffsets(t, f.kafka, "b")["t/0"]; got != 20 {
			t.Errorf("kafka b t/0 %d a minute on, want 20: the failure of group a stopped b", got)
		}
		f.legacy.SetOffset("b", "t", 0, 30)
		f.watch.fire(t, "b")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := kafkaOffsets(t, f.kafka, "b")["t/0"]; got != 30 {
			t.Errorf("kafka b t/0 %d after a change to 30, want 30", got)
		}
		if err := stop(); err == nil || !strings.Contains(err.Error(), "a:") || strings.Contains(err.Error(), "b:") {
			t.Errorf("Run's end %v, want group a alone not mirrored", err)
		}
	})
}
