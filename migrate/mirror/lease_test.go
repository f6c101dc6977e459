package mirror_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// lease is a fake migrate.WriteLease the test grants and takes away by hand. Each context Hold
// returns carries the number of that Hold, so a write can be traced to it.
type lease struct {
	mu     sync.Mutex
	held   bool
	gained chan struct{} // closed while held
	holds  int
}

type holdKey struct{}

func newLease(held bool) *lease {
	l := &lease{gained: make(chan struct{})}
	l.set(held)
	return l
}

func (l *lease) set(held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case held && !l.held:
		close(l.gained)
	case !held && l.held:
		l.gained = make(chan struct{})
	}
	l.held = held
}

func (l *lease) Hold(ctx context.Context) (context.Context, context.CancelFunc, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return nil, nil, fmt.Errorf("held by host other pid 7: %w", migrate.ErrLeaseNotHeld)
	}
	l.holds++
	ctx, cancel := context.WithCancel(context.WithValue(ctx, holdKey{}, l.holds))
	return ctx, cancel, nil
}

func (l *lease) Gained() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gained
}

func (l *lease) lastHold() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holds
}

// tracing wraps the fake stores' writes and records the Hold number of each write's context
// (0: a context that did not come from Hold) and whether it was still live.
type tracing struct {
	migrate.OffsetCommitter
	migrate.LegacyOffsetWriter
	mu     sync.Mutex
	holds  []int
	errors []error
}

func (w *tracing) record(ctx context.Context) {
	n, _ := ctx.Value(holdKey{}).(int)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holds = append(w.holds, n)
	w.errors = append(w.errors, ctx.Err())
}

func (w *tracing) Commit(ctx context.Context, group string, cs []migrate.Commit) ([]migrate.CommitError, error) {
	w.record(ctx)
	return w.OffsetCommitter.Commit(ctx, group, cs)
}

func (w *tracing) AdvanceOffsets(ctx context.Context, group string, offs map[migrate.TopicPartition]int64) (map[migrate.TopicPartition]string, error) {
	w.record(ctx)
	return w.LegacyOffsetWriter.AdvanceOffsets(ctx, group, offs)
}

func (w *tracing) seen() ([]int, []error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.holds...), append([]error(nil), w.errors...)
}

// TestMirrorLeaseNotHeldWritesNothing: a standby reads and reports its groups but writes
// nothing, counts no failure, and stops cleanly (the holder writes: nothing is left over).
// Once the lease is gained every group is synced again and written, the keep-alive included.
func TestMirrorLeaseNotHeldWritesNothing(t *testing.T) {
	f := newFixture()
	l := newLease(false)
	f.m.Lease = l
	f.legacy.SetOffset("g", "t", 0, 10)
	f.legacy.SetOffset("h", "t", 0, 20)
	f.kafka.SetCommitted("h", "t", 0, 20) // h needs only its keep-alive
	stop := f.start(t)
	for _, g := range []string{"g", "h"} {
		s := f.obs.next(t, g)
		if len(s.Writes) != 0 || s.Written() != 0 {
			t.Errorf("%s synced without the lease: writes %+v, want none", g, s.Writes)
		}
		// Kafka has no commit for g: missing, not lag.
		if g == "g" && (s.Lag != 0 || s.Missing != 1 || s.Partitions != 1) {
			t.Errorf("g: lag %d, missing %d, partitions %d: a standby still reports its groups (want 0, 1, 1)", s.Lag, s.Missing, s.Partitions)
		}
	}
	f.legacy.SetOffset("g", "t", 0, 11)
	f.watch.fire(t, "g")
	if s := f.obs.next(t, "g"); len(s.Writes) != 0 {
		t.Errorf("g changed and synced without the lease: writes %+v, want none", s.Writes)
	}
	if c := f.kafka.Commits(); len(c) != 0 {
		t.Fatalf("committed without the lease: %+v", c)
	}

	l.set(true)
	got := map[string]mirror.GroupStatus{}
	for _, g := range []string{"g", "h"} {
		got[g] = f.obs.next(t, g)
	}
	if w := writes(got["g"], mirror.ReasonMirror); len(w) != 1 || w["t/0"].To != 11 || w["t/0"].Err != nil {
		t.Errorf("g after the lease was gained: mirror writes %+v, want t/0 -> 11", w)
	}
	if w := writes(got["h"], mirror.ReasonKeepalive); len(w) != 1 || w["t/0"].Err != nil {
		t.Errorf("h after the lease was gained: keep-alive writes %+v, want t/0", w)
	}
	if k := kafkaOffsets(t, f.kafka, "g"); k["t/0"] != 11 {
		t.Errorf("kafka g t/0 = %d, want 11", k["t/0"])
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	select {
	case err := <-f.obs.failed:
		t.Errorf("a sync without the lease was reported failed: %v", err)
	default:
	}
}

// TestMirrorLeaseStandbyStopsClean: a standby stopped with changes it did not write exits
// without an error: they are the holder's, not groups left unmirrored.
func TestMirrorLeaseStandbyStopsClean(t *testing.T) {
	f := newFixture()
	f.m.Lease = newLease(false)
	f.legacy.SetOffset("g", "t", 0, 10)
	stop := f.start(t)
	f.obs.next(t, "g")
	if err := stop(); err != nil {
		t.Errorf("a standby's stop: %v, want nil", err)
	}
	if c := f.kafka.Commits(); len(c) != 0 {
		t.Errorf("a standby's flush committed: %+v", c)
	}
}

// TestMirrorLeaseWriteUsesHoldContext: each write, to Kafka and (--reverse) to ZooKeeper, runs
// under the context of a Hold taken for it, so it ends when the lease could be lost.
func TestMirrorLeaseWriteUsesHoldContext(t *testing.T) {
	f := newFixture()
	l := newLease(true)
	tr := &tracing{OffsetCommitter: f.kafka, LegacyOffsetWriter: f.legacy}
	f.m.Lease, f.m.Committer, f.m.LegacyWriter, f.m.Reverse = l, tr, tr, true
	f.legacy.SetOffset("g", "t", 0, 10) // zk-primary: into Kafka
	f.legacy.SetOffset("r", "t", 0, 5)  // kafka-primary: into ZooKeeper
	f.kafka.SetCommitted("r", "t", 0, 9)
	f.kafka.SetGroup("r", "Stable", 1)
	f.start(t)
	for _, g := range []string{"g", "r"} {
		if s := f.obs.next(t, g); s.Written() != 1 {
			t.Fatalf("%s: %d writes, want 1: %+v", g, s.Written(), s.Writes)
		}
	}
	holds, errs := tr.seen()
	if len(holds) != 2 {
		t.Fatalf("%d writes seen, want 2", len(holds))
	}
	for i, h := range holds {
		if h == 0 {
			t.Errorf("write %d did not use a context from Hold", i)
		}
		if errs[i] != nil {
			t.Errorf("write %d got a context already ended: %v", i, errs[i])
		}
	}
	if holds[0] == holds[1] {
		t.Errorf("two writes used the same Hold %d: each write holds the lease itself", holds[0])
	}
	if last := l.lastHold(); holds[1] != last && holds[0] != last {
		t.Errorf("writes used holds %v, the latest Hold was %d: a write must use the Hold taken just before it", holds, last)
	}
}

// TestMirrorLeaseLostBeforeCommit: the lease lost between the cheap check and the write
// (during the rate-limit wait and the fresh read): nothing is written, and nothing counts as
// failed; the group is written once the lease is back.
func TestMirrorLeaseLostBeforeCommit(t *testing.T) {
	f := newFixture()
	l := newLease(true)
	f.m.Lease = l
	var once sync.Once // the first wait only: the retry after the lease is back goes through
	f.m.Limiter = limiterFunc(func(context.Context, int) error { once.Do(func() { l.set(false) }); return nil })
	f.legacy.SetOffset("g", "t", 0, 10)
	f.start(t)
	if s := f.obs.next(t, "g"); len(s.Writes) != 0 {
		t.Errorf("lease lost before the commit: writes %+v, want none", s.Writes)
	}
	if c := f.kafka.Commits(); len(c) != 0 {
		t.Fatalf("committed after the lease was lost: %+v", c)
	}
	l.set(true)
	if s := f.obs.next(t, "g"); s.Written() != 1 {
		t.Errorf("the lease back: %d writes, want 1: %+v", s.Written(), s.Writes)
	}
	if k := kafkaOffsets(t, f.kafka, "g"); k["t/0"] != 10 {
		t.Errorf("kafka g t/0 = %d after the lease came back, want 10", k["t/0"])
	}
	select {
	case err := <-f.obs.failed:
		t.Errorf("a write skipped for the lease was reported failed: %v", err)
	default:
	}
}

type limiterFunc func(ctx context.Context, n int) error

func (f limiterFunc) Wait(ctx context.Context, n int) error { return f(ctx, n) }
