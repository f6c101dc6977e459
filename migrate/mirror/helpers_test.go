package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// waitFor bounds how long a test waits for the mirror to report something; it is a hang guard,
// never an assertion on speed.
const waitFor = 20 * time.Second

// observer collects what the mirror reports.
type observer struct {
	synced     chan mirror.GroupStatus
	failed     chan error
	selections chan mirror.Selection
	mu         sync.Mutex
	state      mirror.LoopState // the latest
	lags       map[string]int64 // the latest LegacyLag of each group
}

func newObserver() *observer {
	return &observer{synced: make(chan mirror.GroupStatus, 1000), failed: make(chan error, 1000),
		selections: make(chan mirror.Selection, 1000)}
}

func (o *observer) GroupSynced(s mirror.GroupStatus)    { o.synced <- s }
func (o *observer) SyncFailed(_ []string, err error)    { o.failed <- err }
func (o *observer) SelectionChanged(s mirror.Selection) { o.selections <- s }
func (o *observer) LoopState(s mirror.LoopState)        { o.mu.Lock(); o.state = s; o.mu.Unlock() }

func (o *observer) LegacyLag(group string, lag int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lags == nil {
		o.lags = map[string]int64{}
	}
	o.lags[group] = lag
}

// legacyLag returns the latest LegacyLag reported of group, and whether one was.
func (o *observer) legacyLag(group string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	lag, ok := o.lags[group]
	return lag, ok
}

// next returns the next status of group, skipping other groups' statuses.
func (o *observer) next(t *testing.T, group string) mirror.GroupStatus {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case s := <-o.synced:
			if s.Group == group {
				return s
			}
		case <-deadline:
			t.Fatalf("no sync of group %s reported within %s", group, waitFor)
		}
	}
}

// nextFailure returns the next sync failure reported.
func (o *observer) nextFailure(t *testing.T) error {
	t.Helper()
	select {
	case err := <-o.failed:
		return err
	case <-time.After(waitFor):
		t.Fatalf("no sync failure reported within %s", waitFor)
		return nil
	}
}

// drain returns the statuses reported and not taken yet, without waiting: under synctest, after
// synctest.Wait, that is every status reported so far.
func (o *observer) drain() []mirror.GroupStatus {
	var out []mirror.GroupStatus
	for {
		select {
		case s := <-o.synced:
			out = append(out, s)
		default:
			return out
		}
	}
}

// nextAny returns the next status reported, of any group.
func (o *observer) nextAny(t *testing.T) mirror.GroupStatus {
	t.Helper()
	select {
	case s := <-o.synced:
		return s
	case <-time.After(waitFor):
		t.Fatalf("no sync reported within %s", waitFor)
	}
	return mirror.GroupStatus{}
}

// nextSelectionIs waits for the next selection and checks its groups.
func (f *fixture) nextSelectionIs(t *testing.T, groups []string) {
	t.Helper()
	if sel := f.obs.nextSelection(t); !slices.Equal(sel.Groups, groups) {
		t.Fatalf("selection %+v, want %v", sel, groups)
	}
}

// nextSelection returns the next selection reported.
func (o *observer) nextSelection(t *testing.T) mirror.Selection {
	t.Helper()
	select {
	case s := <-o.selections:
		return s
	case <-time.After(waitFor):
		t.Fatalf("no selection reported within %s", waitFor)
	}
	return mirror.Selection{}
}

// watcher is a fake migrate.LegacyWatcher: the test fires changes by hand. Like the real one,
// it reports each group of a selection changed once "armed" (at once, here).
type watcher struct {
	mu    sync.Mutex
	ev    migrate.WatchEvents
	calls [][]string // each selection received
	ready chan struct{}
	once  sync.Once
}

func newWatcher() *watcher { return &watcher{ready: make(chan struct{})} }

func (w *watcher) Watch(ctx context.Context, selections <-chan []string, ev migrate.WatchEvents) error {
	var prev []string
	for {
		select {
		case <-ctx.Done():
			return nil
		case groups := <-selections:
			w.mu.Lock()
			w.ev = ev
			w.calls = append(w.calls, groups)
			w.mu.Unlock()
			for _, g := range groups {
				if !slices.Contains(prev, g) {
					ev.Changed(g)
				}
			}
			prev = groups
			ev.Armed(true)
			w.once.Do(func() { close(w.ready) })
		}
	}
}

func (w *watcher) watched() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]string(nil), w.calls...)
}

func (w *watcher) fire(t *testing.T, group string) {
	t.Helper()
	w.waitReady(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ev.Changed(group)
}

// fireList reports that the list of groups changed (a group created or deleted).
func (w *watcher) fireList(t *testing.T) {
	t.Helper()
	w.waitReady(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ev.GroupsChanged()
}

func (w *watcher) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-w.ready:
	case <-time.After(waitFor):
		t.Fatal("the mirror never started watching")
	}
}

// refusing is a committer that refuses every partition as the broker does for an active group.
type refusing struct{ calls atomic.Int32 }

func (r *refusing) Commit(_ context.Context, group string, cs []migrate.Commit) ([]migrate.CommitError, error) {
	r.calls.Add(1)
	out := make([]migrate.CommitError, len(cs))
	for i, c := range cs {
		out[i] = migrate.CommitError{TopicPartition: c.TopicPartition,
			Err: fmt.Errorf("commit %s/%s: UNKNOWN_MEMBER_ID: %w", group, c.TopicPartition, migrate.ErrGroupActive)}
	}
	return out, nil
}

// clock is a fake Now the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixture is a mirror over fakes with long intervals: only the initial sync, fired watches and
// what a test sets up happen.
type fixture struct {
	legacy *migratetest.LegacyStore
	kafka  *migratetest.KafkaStore
	watch  *watcher
	obs    *observer
	m      *mirror.Mirror
}

func newFixture() *fixture {
	f := &fixture{legacy: migratetest.NewLegacyStore(), kafka: migratetest.NewKafkaStore(), watch: newWatcher(), obs: newObserver()}
	f.kafka.AddTopic("t", migrate.PartitionRange{LogEnd: 1000}, migrate.PartitionRange{LogEnd: 1000})
	f.m = &mirror.Mirror{Legacy: f.legacy, Watcher: f.watch, Kafka: f.kafka, Committer: f.kafka,
		LegacyWriter: f.legacy, Observer: f.obs, Execute: true,
		ResyncInterval: time.Hour, KeepaliveInterval: time.Hour, PollInterval: time.Hour, BatchDelay: time.Millisecond,
		KafkaUnreachable: func(err error) bool { return errors.Is(err, errOutage) }}
	return f
}

// start runs the mirror until the returned stop is called; stop returns Run's error. Unless
// the test calls stop itself (and checks the error), Run must end without one.
func (f *fixture) start(t *testing.T) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.m.Run(ctx) }()
	var once sync.Once
	var err error
	end := func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(waitFor):
				err = fmt.Errorf("Run did not return within %s of the cancel", waitFor)
			}
		})
		return err
	}
	checked := false
	t.Cleanup(func() {
		if err := end(); err != nil && !checked {
			t.Errorf("Run: %v", err)
		}
	})
	return func() error {
		checked = true
		return end()
	}
}

// mirrored returns the writes of a status with the given reason.
func writes(s mirror.GroupStatus, reason string) map[string]mirror.Write {
	out := map[string]mirror.Write{}
	for _, w := range s.Writes {
		if w.Reason == reason {
			out[w.TopicPartition.String()] = w
		}
	}
	return out
}

func kafkaOffsets(t *testing.T, k *migratetest.KafkaStore, group string) map[string]int64 {
	t.Helper()
	st, err := k.Groups(context.Background(), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for tp, o := range st[group].Committed {
		out[tp.String()] = o
	}
	return out
}

func ptr(v int64) *int64 { return &v }

// latest returns the latest LoopState reported.
func (o *observer) latest() mirror.LoopState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.state
}
