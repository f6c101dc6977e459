package mirror_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestMirrorFlushOnStop: a change seen just before the stop (SIGTERM) is still written, and Run
// returns nil.
func TestMirrorFlushOnStop(t *testing.T) {
	f := newFixture()
	f.m.BatchDelay = time.Hour // the change would wait for ever without the flush
	f.legacy.SetOffset("g", "t", 0, 10)
	stop := f.start(t)
	f.obs.next(t, "g")
	f.legacy.SetOffset("g", "t", 0, 77)
	f.watch.fire(t, "g")
	if err := stop(); err != nil {
		t.Fatalf("Run after the stop: %v", err)
	}
	if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 77 {
		t.Errorf("kafka after the stop %d, want the flushed 77", got)
	}
}

// TestMirrorFlushAtStop: at a stop (SIGTERM), the flush also syncs a group waiting for the retry
// of a failed write, and syncs again a group whose stores moved under it; a group it still
// cannot mirror makes Run fail, naming it (Kafka is behind ZooKeeper there, and a clean exit,
// "pending changes flushed", would hide it), but not a write Kafka refuses for good.
func TestMirrorFlushAtStop(t *testing.T) {
	cases := []struct {
		name string
		// setup runs before the start; atStop after the first sync, just before the stop. Kafka
		// is read through h, which commits on request.
		setup, atStop func(f *fixture, h *commitOnRead)
		wantFirst     int // partitions the first sync writes
		wantKafka     int64
		wantErrSub    string
	}{
		{name: "kafka back: the retry is flushed", wantKafka: 10,
			setup:  func(f *fixture, _ *commitOnRead) { f.kafka.FailCommits(errors.New("NOT_COORDINATOR")) },
			atStop: func(f *fixture, _ *commitOnRead) { f.kafka.FailCommits(nil) }},
		{name: "kafka still failing: the stop is an error", wantKafka: 5, wantErrSub: "1 groups not mirrored",
			setup: func(f *fixture, _ *commitOnRead) { f.kafka.FailCommits(errors.New("NOT_COORDINATOR")) }},
		{name: "a legacy offset of a deleted topic is not counted", wantFirst: 1, wantKafka: 10,
			setup: func(f *fixture, _ *commitOnRead) { f.legacy.SetOffset("g", "gone", 0, 3) }},
		{name: "a write failed once, mirrored by a later pass while Kafka moved ahead", wantKafka: 10,
			setup: func(f *fixture, _ *commitOnRead) {
				f.legacy.SetOffset("g", "t", 1, 10)
				f.kafka.SetCommitted("g", "t", 1, 5)
				f.legacy.SetLive("g", "scala-consumer-1") // dual-commit enabled: phases switch
				f.kafka.FailCommits(errors.New("NOT_COORDINATOR"))
				var calls atomic.Int32
				f.kafka.OnCommit(func(string) {
					if calls.Add(1) == 3 { // the flush's second pass: the coordinator is back
						f.kafka.FailCommits(nil)
					}
				})
			},
			atStop: func(_ *fixture, h *commitOnRead) {
				h.commitOn(2, "g", migrate.TopicPartition{Topic: "t", Partition: 1}, 25)
			}},
		{name: "a topic the coordinator does not know yet is reported", wantFirst: 1, wantKafka: 10, wantErrSub: "1 groups not mirrored",
			setup: func(f *fixture, _ *commitOnRead) {
				f.kafka.AddTopic("new", migrate.PartitionRange{LogEnd: 100})
				f.m.Committer = &unknownTopicOnce{OffsetCommitter: f.kafka, topic: "new"}
				f.m.BatchDelay = time.Hour
			},
			atStop: func(f *fixture, _ *commitOnRead) {
				f.legacy.SetOffset("g", "new", 0, 7) // Kafka's metadata has new/0; the commit says unknown
				f.watch.fire(t, "g")
			}},
		{name: "kafka moved ahead during the flush: decided anew, not a failure", wantFirst: 1, wantKafka: 25,
			setup: func(f *fixture, _ *commitOnRead) {
				f.m.BatchDelay = time.Hour // the change below is synced by the flush only
			},
			atStop: func(f *fixture, h *commitOnRead) {
				f.legacy.SetOffset("g", "t", 0, 20)
				// A committer outside the group (a dual-commit-enabled Scala consumer) commits
				// 25 between the flush's batch read and its re-read before the commit.
				h.commitOn(2, "g", migrate.TopicPartition{Topic: "t"}, 25)
				f.watch.fire(t, "g")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.m.FlushTimeout = time.Second
			f.legacy.SetOffset("g", "t", 0, 10)
			f.kafka.SetCommitted("g", "t", 0, 5)
			f.kafka.SetGroup("g", "Empty", 0)
			h := &commitOnRead{KafkaState: f.kafka, k: f.kafka}
			f.m.Kafka = h
			tc.setup(f, h)
			stop := f.start(t)
			if s := f.obs.next(t, "g"); s.Written() != tc.wantFirst {
				t.Fatalf("first sync wrote %d, want %d", s.Written(), tc.wantFirst)
			}
			if tc.atStop != nil {
				tc.atStop(f, h)
			}
			err := stop()
			if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != tc.wantKafka {
				t.Errorf("after the stop Kafka holds %d for g t/0, want %d", got, tc.wantKafka)
			}
			switch {
			case tc.wantErrSub == "" && err != nil:
				t.Errorf("Run: %v, want a clean stop", err)
			case tc.wantErrSub != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrSub) || !strings.Contains(err.Error(), ": g:")):
				t.Errorf("Run: %v, want an error containing %q naming g", err, tc.wantErrSub)
			}
		})
	}
}

// unknownTopicOnce answers the first commit to topic with UNKNOWN_TOPIC_OR_PARTITION, as a
// coordinator whose metadata lags a topic just created, and commits the rest.
type unknownTopicOnce struct {
	migrate.OffsetCommitter
	topic string
	done  atomic.Bool
}

func (u *unknownTopicOnce) Commit(ctx context.Context, group string, cs []migrate.Commit) ([]migrate.CommitError, error) {
	other := slices.DeleteFunc(slices.Clone(cs), func(c migrate.Commit) bool { return c.Topic == u.topic })
	if len(other) == len(cs) || u.done.Swap(true) {
		return u.OffsetCommitter.Commit(ctx, group, cs)
	}
	res, err := u.OffsetCommitter.Commit(ctx, group, other)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.Topic == u.topic {
			res = append(res, migrate.CommitError{TopicPartition: c.TopicPartition, Err: migratetest.ErrUnknownTopicOrPartition})
		}
	}
	return res, nil
}

// commitOnRead reads Kafka's groups through; once told, its onRead-th read from then on sees a
// commit land first.
type commitOnRead struct {
	migrate.KafkaState
	k     *migratetest.KafkaStore
	mu    sync.Mutex
	left  int // reads until the commit; 0: none pending
	group string
	tp    migrate.TopicPartition
	to    int64
}

func (c *commitOnRead) commitOn(read int, group string, tp migrate.TopicPartition, to int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left, c.group, c.tp, c.to = read, group, tp, to
}

func (c *commitOnRead) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	c.mu.Lock()
	if c.left > 0 {
		if c.left--; c.left == 0 {
			c.k.SetCommitted(c.group, c.tp.Topic, c.tp.Partition, c.to)
		}
	}
	c.mu.Unlock()
	return c.KafkaState.Groups(ctx, groups)
}

// TestMirrorSurvivesStoreFailure: a failed read is reported, not fatal, and retried at the next poll.
func TestMirrorSurvivesStoreFailure(t *testing.T) {
	f := newFixture()
	f.m.PollInterval = time.Millisecond
	f.legacy.SetOffset("g", "t", 0, 10)
	f.kafka.FailReads(context.DeadlineExceeded)
	f.start(t)
	select {
	case <-f.obs.failed:
	case <-time.After(waitFor):
		t.Fatal("no failure reported")
	}
	f.kafka.FailReads(nil)
	for {
		// Statuses of the outage (KafkaErr) report the pending write failed: wait for the write.
		if s := f.obs.next(t, "g"); s.KafkaErr == nil && len(writes(s, mirror.ReasonMirror)) > 0 {
			break
		}
	}
	if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 10 {
		t.Errorf("kafka after recovery %d, want 10", got)
	}
}

func TestLimiter(t *testing.T) {
	c := &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := mirror.NewLimiter(100, c.Now)
	steps := []struct {
		advance time.Duration
		n       int
		want    time.Duration
	}{
		{0, 50, 0},                        // first request passes at once
		{0, 50, 500 * time.Millisecond},   // waits for the first's half second
		{0, 1, time.Second},               // behind both
		{2 * time.Second, 1000, 0},        // idle time is not banked beyond now
		{time.Second, 1, 9 * time.Second}, // a big request delays the next ones
	}
	for i, s := range steps {
		c.add(s.advance)
		if got := l.Reserve(s.n); got != s.want {
			t.Errorf("step %d: wait %s, want %s", i, got, s.want)
		}
	}
}

// TestLimiterGivesBackCancelled: a booking whose wait was cancelled does not delay the requests
// after it, and a rate so low that a booking overflows a Duration still delays, never wraps.
func TestLimiterGivesBackCancelled(t *testing.T) {
	c := &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := mirror.NewLimiter(1, c.Now)
	l.Reserve(10) // the next request waits 10s
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v, want context.Canceled", err)
	}
	if got := l.Reserve(1); got != 10*time.Second {
		t.Errorf("wait after a cancelled booking of 5s %s, want 10s", got)
	}

	tiny := mirror.NewLimiter(1e-12, c.Now)
	tiny.Reserve(1)
	if got := tiny.Reserve(1); got <= 0 {
		t.Errorf("wait behind a booking of 1e12 s %s, want a positive delay", got)
	}
}

// slowPoll is a migrate.KafkaState whose Groups calls, once blocked is closed, wait for release
// whatever their context says, as sarama's calls do.
type slowPoll struct {
	migrate.KafkaState
	blocked <-chan struct{}
	entered chan struct{}
	release chan struct{}
}

func (s *slowPoll) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	s.hold()
	return s.KafkaState.Groups(ctx, groups)
}

// ActiveGroups is the poll's first read: held as Groups is.
func (s *slowPoll) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	s.hold()
	return s.KafkaState.ActiveGroups(ctx, groups)
}

// hold blocks a read until released, once blocked is closed.
func (s *slowPoll) hold() {
	select {
	case <-s.blocked:
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-s.release
	default:
	}
}

// TestMirrorRunWaitsForPoll: Run returns only after the running poll of the Kafka group states
// returned, so the caller can close the stores. On synctest's clock: once every goroutine of the
// test is blocked, Run must still be waiting.
func TestMirrorRunWaitsForPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.m.PollInterval = time.Second
		// Without a watcher, nothing but the polls reads Kafka after the first sync: its report
		// of g once armed would be a sync blocked in the slow read, and Run would wait for it
		// whether it waits for the poll or not.
		f.m.Watcher = nil
		f.legacy.SetOffset("g", "t", 0, 10)
		blocked := make(chan struct{})
		slow := &slowPoll{KafkaState: f.kafka, blocked: blocked, entered: make(chan struct{}, 1), release: make(chan struct{})}
		f.m.Kafka = slow
		var once sync.Once
		release := func() { once.Do(func() { close(slow.release) }) }
		stop := f.start(t)
		t.Cleanup(release) // runs before the fixture's stop: a failing test does not hang
		f.obs.next(t, "g")
		close(blocked)
		select {
		case <-slow.entered: // the poll at 1s
		case <-time.After(waitFor):
			t.Fatal("no poll of the Kafka group states started")
		}
		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		synctest.Wait() // Run has flushed and is blocked: on the poll, or nothing at all
		select {
		case err := <-stopped:
			t.Fatalf("Run returned (%v) while a poll was still running", err)
		default:
		}
		release()
		if err := <-stopped; err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}

// TestMirrorRetriesFailedWrites: a partition whose commit failed is tried again, not at once in
// a loop but at the poll after a backoff of one poll interval that doubles with each failure in
// a row. On synctest's clock the test looks between polls, once each has run to its end: the
// failing write is tried at the polls at 1m and 3m and not at 2m; once Kafka takes it again, the
// next try, at 7m, writes it.
func TestMirrorRetriesFailedWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture() // the mirror's clock and ticker are the bubble's
		f.m.PollInterval = time.Minute
		f.m.Watcher = nil // its report of g once armed would be a change, synced at once
		f.legacy.SetOffset("g", "t", 0, 10)
		key := migrate.Key{Group: "g", Topic: "t", Partition: 0}
		f.kafka.FailPartition(key, errors.New("NOT_LEADER_OR_FOLLOWER"))
		f.start(t)
		steps := []struct {
			at    time.Duration // when the test looks: halfway between two polls
			fixed bool          // Kafka takes the write again from here on
			tries []bool        // the writes of g tried since the last look: whether each failed
		}{
			{at: 30 * time.Second, tries: []bool{true}}, // the first sync
			{at: 90 * time.Second, tries: []bool{true}}, // 1m: one interval after it
			{at: 150 * time.Second},                     // 2m: the backoff is two intervals now
			{at: 210 * time.Second, tries: []bool{true}},
			{at: 270 * time.Second, fixed: true}, // 4m to 6m: four intervals now
			{at: 330 * time.Second},
			{at: 390 * time.Second},
			{at: 450 * time.Second, tries: []bool{false}}, // 7m: done
			{at: 20 * time.Minute},                        // and no try after that
		}
		start := time.Now()
		for _, st := range steps {
			time.Sleep(start.Add(st.at).Sub(time.Now()))
			synctest.Wait() // the mirror is idle: every poll up to now has run to its end
			var tries []bool
			for _, s := range f.obs.drain() {
				for _, w := range s.Writes {
					tries = append(tries, w.Err != nil)
				}
			}
			if !slices.Equal(tries, st.tries) {
				t.Fatalf("at %s: %d writes of g tried (failed: true) %v, want %v", st.at, len(tries), tries[:min(len(tries), 8)], st.tries)
			}
			if st.fixed {
				f.kafka.FailPartition(key, nil)
			}
		}
		if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 10 {
			t.Errorf("kafka after the retry %d, want 10", got)
		}
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %s: %s", waitFor, what)
		}
		time.Sleep(time.Millisecond) // polling interval
	}
}

// brokenWatcher cannot watch at all.
type brokenWatcher struct{}

func (brokenWatcher) Watch(context.Context, <-chan []string, migrate.WatchEvents) error {
	return errors.New("zookeeper: not authorized to watch")
}

// TestMirrorWatchFailureEndsRun: a watcher that cannot watch ends Run with its error (it does
// not hang, and it is not swallowed).
func TestMirrorWatchFailureEndsRun(t *testing.T) {
	f := newFixture()
	f.m.Watcher = brokenWatcher{}
	f.legacy.SetOffset("g", "t", 0, 10)
	done := make(chan error, 1)
	go func() { done <- f.m.Run(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not authorized to watch") {
			t.Errorf("Run: %v, want the watcher's error", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Run did not return after the watcher failed")
	}
}

// TestMirrorResyncOnRequest: a resync request (SIGHUP in the CLI) re-selects and re-reads at
// once, long before the resync interval.
func TestMirrorResyncOnRequest(t *testing.T) {
	f := newFixture()
	resync := make(chan struct{})
	f.m.Resync = resync
	f.legacy.SetOffset("g1", "t", 0, 10)
	f.start(t)
	f.obs.next(t, "g1")
	f.legacy.SetOffset("g2", "t", 0, 20)
	select {
	case resync <- struct{}{}:
	case <-time.After(waitFor):
		t.Fatal("the mirror never took the resync request")
	}
	if s := f.obs.next(t, "g2"); writes(s, mirror.ReasonMirror)["t/0"].To != 20 {
		t.Errorf("g2 after the resync request: %+v, want t/0 mirrored at 20", s.Writes)
	}
}
