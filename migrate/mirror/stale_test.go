package mirror_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// hookLimiter is a mirror.RateLimiter that runs hook inside each Wait: what a store does while
// the mirror waits for its turn (a consumer commits, joins, registers).
type hookLimiter struct {
	mu    sync.Mutex
	calls int
	hook  func(ctx context.Context, call int) error
}

func (h *hookLimiter) Wait(ctx context.Context, _ int) error {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	if h.hook == nil {
		return ctx.Err()
	}
	return h.hook(ctx, n)
}

// TestMirrorRereadsKafkaBeforeCommit: what Kafka was read as for the batch may be stale by the
// time the group's turn comes; a consumer that committed meanwhile (a simple consumer commits
// into an Empty group without joining) is never moved backwards, by a mirror write or by a
// keep-alive.
func TestMirrorRereadsKafkaBeforeCommit(t *testing.T) {
	cases := []struct {
		name   string
		zk     int64
		kafka  *int64 // committed before the sync; nil: none
		during int64  // what the consumer commits while the mirror waits
	}{
		{name: "mirror write over a newer consumer commit", zk: 100, during: 500},
		{name: "mirror write where kafka had an older commit", zk: 100, kafka: ptr(50), during: 500},
		{name: "keep-alive over a newer consumer commit", zk: 50, kafka: ptr(50), during: 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.legacy.SetOffset("g", "t", 0, tc.zk)
			if tc.kafka != nil {
				f.kafka.SetCommitted("g", "t", 0, *tc.kafka)
			}
			f.kafka.SetGroup("g", "Empty", 0)
			f.m.Limiter = &hookLimiter{hook: func(ctx context.Context, call int) error {
				if call == 1 {
					f.kafka.SetCommitted("g", "t", 0, tc.during)
				}
				return ctx.Err()
			}}
			f.start(t)
			s := f.obs.next(t, "g")
			if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != tc.during {
				t.Errorf("kafka t/0 after the sync %d, want the consumer's %d (writes %+v)", got, tc.during, s.Writes)
			}
			for _, c := range f.kafka.Commits() {
				if c.Offset < tc.during {
					t.Errorf("committed %d below the consumer's %d", c.Offset, tc.during)
				}
			}
		})
	}
}

// TestMirrorFlushAfterCutWait: a group whose rate-limit wait was cut off by the stop is synced
// by the flush, not skipped.
func TestMirrorFlushAfterCutWait(t *testing.T) {
	f := newFixture()
	f.legacy.SetOffset("g", "t", 0, 10)
	entered := make(chan struct{})
	f.m.Limiter = &hookLimiter{hook: func(ctx context.Context, call int) error {
		if call == 1 {
			close(entered)
			<-ctx.Done() // the stop arrives while the group waits for its turn
		}
		return ctx.Err()
	}}
	stop := f.start(t)
	select {
	case <-entered:
	case <-time.After(waitFor):
		t.Fatal("the mirror never waited on the limiter")
	}
	if err := stop(); err != nil {
		t.Fatalf("Run after the stop: %v", err)
	}
	if got, ok := kafkaOffsets(t, f.kafka, "g")["t/0"]; !ok || got != 10 {
		t.Errorf("kafka t/0 after the stop %d (present %v), want the flushed 10", got, ok)
	}
}

// TestMirrorKeepaliveOnlyZKPrimary: groups in other phases are never due for a keep-alive, so
// polling does not re-read them from ZooKeeper on every tick. On synctest's clock: ten polls
// have run to their end when the reads are counted.
func TestMirrorKeepaliveOnlyZKPrimary(t *testing.T) {
	cases := []struct {
		name  string
		live  bool
		phase mirror.Phase
	}{
		{name: "kafka-primary", phase: mirror.PhaseKafkaPrimary},
		{name: "switching", live: true, phase: mirror.PhaseSwitching},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture() // the mirror's clock and ticker are the bubble's
				f.m.PollInterval = time.Minute
				f.m.KeepaliveInterval = time.Minute // a group kept alive would be due at every poll
				f.legacy.SetOffset("g", "t", 0, 10)
				if tc.live {
					f.legacy.SetLive("g", "ids/c1")
				}
				f.kafka.SetCommitted("g", "t", 0, 12) // Kafka ahead
				f.kafka.SetGroup("g", "Empty", 0)
				f.start(t)
				if s := f.obs.next(t, "g"); s.Phase != tc.phase {
					t.Fatalf("phase %s, want %s", s.Phase, tc.phase)
				}
				time.Sleep(30 * time.Second) // the start settles: the watcher's report of g once armed
				synctest.Wait()
				reads := f.legacy.ReadCalls()
				_, polls := f.kafka.Calls()

				time.Sleep(10 * time.Minute) // the polls at 1m to 10m
				synctest.Wait()              // the mirror is idle: each has run to its end
				if n := f.legacy.ReadCalls() - reads; n != 0 {
					t.Errorf("%d ZooKeeper reads of an unchanged %s group in 10 polls, want none", n, tc.phase)
				}
				// Each poll asks which groups are active, then reads whole the groups Kafka
				// consumers own or share: this one.
				if _, n := f.kafka.Calls(); n-polls != 2*10 {
					t.Errorf("%d reads of the Kafka groups, want two in each of the 10 polls", n-polls)
				}
			})
		})
	}
}

// TestMirrorUnreadableGroupAlone: a group that cannot be read does not hold back the others of
// its batch.
func TestMirrorUnreadableGroupAlone(t *testing.T) {
	f := newFixture()
	for _, g := range []string{"a", "bad", "bad2", "c"} {
		f.legacy.SetOffset(g, "t", 0, 10)
	}
	f.legacy.FailRead("bad", errors.New("znode corrupt"))
	f.legacy.FailRead("bad2", errors.New("znode corrupt"))
	stop := f.start(t)
	for _, g := range []string{"a", "c"} {
		s := f.obs.next(t, g)
		if w := writes(s, mirror.ReasonMirror)["t/0"]; w.To != 10 || w.Err != nil {
			t.Errorf("group %s: mirror write %+v, want 10", g, w)
		}
	}
	select {
	case err := <-f.obs.failed:
		// One report for the batch, naming the first group that failed.
		if !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "and 1 more") {
			t.Errorf("failure %v does not name the group \"bad\" and the one more", err)
		}
	case <-time.After(waitFor):
		t.Error("the unreadable group was not reported")
	}
	// Never mirrored: the stop says so, naming them, rather than exiting clean.
	if err := stop(); err == nil || !strings.Contains(err.Error(), "2 groups not mirrored") || !strings.Contains(err.Error(), "bad, bad2") {
		t.Errorf("Run at the stop: %v, want the two unreadable groups named", err)
	}
}

// TestMirrorReverseRechecksZooKeeper: --reverse re-reads the group just before writing, so a
// legacy consumer that came back (rollback) and committed meanwhile is not overwritten with
// Kafka's lower value.
func TestMirrorReverseRechecksZooKeeper(t *testing.T) {
	cases := []struct {
		name   string
		live   bool  // a legacy consumer registers during the wait
		during int64 // ZooKeeper's value written during the wait
		want   int64
	}{
		{name: "legacy consumer registered and committed above kafka", live: true, during: 900, want: 900},
		{name: "zookeeper moved above kafka", during: 700, want: 700},
		{name: "legacy consumer registered, zookeeper unchanged", live: true, during: 100, want: 100},
		{name: "nothing changed: written", during: 100, want: 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := reverseFixture()
			f.m.Limiter = &hookLimiter{hook: func(ctx context.Context, call int) error {
				if call == 1 {
					if tc.live {
						f.legacy.SetLive("g", "ids/c1")
					}
					f.legacy.SetOffset("g", "t", 0, tc.during)
				}
				return ctx.Err()
			}}
			f.start(t)
			f.obs.next(t, "g")
			if got, _ := f.legacy.Offset("g", "t", 0); got != tc.want {
				t.Errorf("zookeeper t/0 after the sync %d, want %d", got, tc.want)
			}
		})
	}
}

// TestMirrorReverseWriteIsConditional: a legacy commit that lands after the re-read just before
// the write (the last moment the mirror can look) still wins: the write is a compare-and-set
// per znode, so ZooKeeper keeps the consumer's value and the mirror reports no write.
func TestMirrorReverseWriteIsConditional(t *testing.T) {
	cases := []struct {
		name      string
		during    int64 // ZooKeeper's value written between the re-read and the write; 0: none
		want      int64
		wantWrote int
	}{
		{name: "a legacy commit above kafka lands just before the write", during: 900, want: 900},
		{name: "a legacy commit equal to kafka lands just before the write", during: 500, want: 500},
		{name: "a legacy commit still below kafka: kafka's value written", during: 300, want: 500, wantWrote: 1},
		{name: "nothing lands: written", want: 500, wantWrote: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := reverseFixture()
			if tc.during > 0 {
				f.legacy.OnAdvance(func(string) { f.legacy.SetOffset("g", "t", 0, tc.during) })
			}
			f.start(t)
			st := f.obs.next(t, "g")
			if got, _ := f.legacy.Offset("g", "t", 0); got != tc.want {
				t.Errorf("zookeeper t/0 after the sync %d, want %d", got, tc.want)
			}
			if got := st.Written(); got != tc.wantWrote {
				t.Errorf("sync reported %d write(s) (%+v), want %d", got, st.Writes, tc.wantWrote)
			}
		})
	}
}

// reverseFixture is a --reverse mirror over group g whose Kafka commit of t/0 (500, an Empty
// group) leads ZooKeeper's (100): a sync writes 500 into ZooKeeper unless something intervenes.
func reverseFixture() *fixture {
	f := newFixture()
	f.m.Reverse = true
	f.legacy.SetOffset("g", "t", 0, 100)
	f.kafka.SetCommitted("g", "t", 0, 500)
	f.kafka.SetGroup("g", "Empty", 0)
	return f
}
