package mirror

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// loop is one Run of a Mirror: which groups need a sync, and what the mirror remembers about
// each group between syncs. Everything it remembers can be rebuilt from the stores: a restarted
// mirror finds the same phases (Kafka active or ahead) and re-commits keep-alives at once.
type loop struct {
	m    *Mirror
	wake chan struct{} // a watch fired: sync soon

	mu     sync.Mutex // guards the fields below it: the watcher's callbacks set them
	dirty  map[string]bool
	relist bool // the list of groups changed: select again
	armed  bool // every watch of the current selection is set

	groups    []string
	phase     map[string]Phase
	kafka     map[string]kafkaSeen // as last seen, to notice changes when polling
	keptAlive map[string]time.Time
	// legacy is each group's usable ZooKeeper offsets as last read, to notice one that went
	// backwards (Rewind).
	legacy     map[string]offsetTable
	lastResync time.Time // when the latest full resync started (its schedule)
	// keepaliveScan is when keepalivesDue last walked the groups.
	keepaliveScan time.Time
	polling       bool // a poll of the Kafka group states is running
	polled        chan pollResult
	polls         sync.WaitGroup // the running poll's goroutine: Run returns only after it
	// failures counts a group's syncs in a row with failed writes; retryAt is when to try again
	// (backing off, so a partition that keeps failing does not flood the log).
	failures map[string]int
	retryAt  map[string]time.Time
	// missing is set while flushing: for each group whose failed writes all said the topic or
	// partition is missing (ErrPartitionMissing), those partitions. The stop leaves the group
	// out if Kafka's metadata confirms they do not exist (a coordinator lagging behind a topic
	// just created says the same).
	missing map[string][]migrate.TopicPartition

	health health // what LoopState reports

	selections chan []string // the latest selection, for the running Watch
	watchStop  func()        // stops the running Watch and waits for it
	watchErr   <-chan error  // the running Watch's end

	lease leaseState // lease.go

	// kafkaDown is the failure of a whole Kafka read or commit while no read has succeeded
	// since (kafkadown.go); nil while Kafka answers. unreachedGroups are the groups waiting for
	// a retry because their batch's Kafka read failed (pending.go).
	kafkaDown       error
	unreachedGroups map[string]bool
}

// health is the loop's own account of its readiness, reported as LoopState.
type health struct {
	unsynced   map[string]bool // groups of the first selection not synced yet
	resyncing  bool            // a full resync is under way
	failed     bool            // a read or write of whole groups failed during it
	lastResync time.Time       // the latest full resync that completed without a failure
}

func newLoop(m *Mirror, groups []string) *loop {
	l := &loop{m: m, wake: make(chan struct{}, 1), dirty: map[string]bool{}, groups: groups,
		phase: map[string]Phase{}, kafka: map[string]kafkaSeen{}, keptAlive: map[string]time.Time{},
		legacy: map[string]offsetTable{},
		polled: make(chan pollResult, 1), failures: map[string]int{}, retryAt: map[string]time.Time{}, unreachedGroups: map[string]bool{},
		selections: make(chan []string, 1), armed: m.Watcher == nil}
	l.health.unsynced = map[string]bool{}
	for _, g := range groups {
		l.health.unsynced[g] = true
	}
	return l
}

// markDirty is the watcher's callback: it must not block.
func (l *loop) markDirty(group string) {
	l.mu.Lock()
	l.dirty[group] = true
	l.mu.Unlock()
	l.poke()
}

// markRelist is the watcher's callback for a change of the list of groups.
func (l *loop) markRelist() {
	l.mu.Lock()
	l.relist = true
	l.mu.Unlock()
	l.poke()
}

// setArmed is the watcher's callback for its arming state.
func (l *loop) setArmed(armed bool) {
	l.mu.Lock()
	l.armed = armed
	l.mu.Unlock()
	l.poke()
}

func (l *loop) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// remark marks groups for the next sync without waking the loop: a failed sync is retried at
// the next poll, not in a tight loop.
func (l *loop) remark(groups []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range groups {
		l.dirty[g] = true
	}
}

func (l *loop) takeDirty() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Sorted(maps.Keys(l.dirty))
	clear(l.dirty)
	return out
}

// watch starts the watcher on the current selection; later selections reach it through
// l.selections (select).
func (l *loop) watch(ctx context.Context) {
	if l.m.Watcher == nil {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)  // the loop reads Watch's result from here
	ended := make(chan struct{}) // closed when Watch has returned, whoever read the result
	l.offer(l.groups)
	ev := migrate.WatchEvents{Changed: l.markDirty, GroupsChanged: l.markRelist, Armed: l.setArmed}
	go func() {
		defer close(ended)
		errc <- l.m.Watcher.Watch(wctx, l.selections, ev)
	}()
	l.watchStop, l.watchErr = func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(watchStopWait):
		}
	}, errc
}

// offer hands the watcher a selection, replacing one it has not taken yet. Only the loop's
// goroutine sends, so the drain-then-send cannot block.
func (l *loop) offer(groups []string) {
	select {
	case <-l.selections:
	default:
	}
	l.selections <- slices.Clone(groups)
}

func (l *loop) stopWatch() {
	if l.watchStop != nil {
		l.watchStop()
		l.watchStop, l.watchErr = nil, nil
	}
}

// watchStopWait bounds how long a stop waits for the watcher: a call it made while ZooKeeper is
// unreachable returns only when the connection comes back or is closed, and the caller closes
// it only after Run returns. The flush must not wait behind it.
const watchStopWait = time.Second

func (l *loop) run(ctx context.Context) error {
	// A poll still reading Kafka must not outlive Run: the caller closes the stores next.
	defer l.polls.Wait()
	l.remark(l.groups)
	l.startResync()
	l.sync(ctx)
	l.endPass()
	l.lastResync = l.m.Now()
	tick := time.NewTicker(l.m.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return l.flush(ctx)
		case err := <-l.watchErr:
			if ctx.Err() == nil {
				return fmt.Errorf("watch legacy groups: %w", err)
			}
			l.watchErr = nil
			continue
		case <-l.wake:
			// Coalesce the changes of the next few milliseconds into one batch.
			t := time.NewTimer(l.m.BatchDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return l.flush(ctx)
			case <-t.C:
			}
		case <-tick.C:
			l.housekeeping(ctx)
		case p := <-l.polled:
			l.pollDone(p)
		case <-l.m.Resync:
			l.lastResync = time.Time{} // due now
			l.housekeeping(ctx)
		case <-l.lease.gained:
			l.leaseGained()
		}
		if l.takeRelist() {
			l.reselect(ctx, false)
		}
		l.sync(ctx)
		l.endPass()
	}
}

// housekeeping marks the groups due for a full resync or a keep-alive, and starts a poll of
// the Kafka group states unless one is still running.
func (l *loop) housekeeping(ctx context.Context) {
	now := l.m.Now()
	if now.Sub(l.lastResync) >= l.m.ResyncInterval && l.reselect(ctx, true) {
		l.lastResync = now
		return
	}
	due := l.keepalivesDue(now)
	for g, at := range l.retryAt {
		if !now.Before(at) {
			due = append(due, g)
			delete(l.retryAt, g)
		}
	}
	l.remark(due)
	if !l.polling && len(l.groups) > 0 {
		l.polling = true
		groups, hot := l.groups, l.hotGroups()
		// In a goroutine of its own: a poll of many groups must not delay a watched change.
		l.polls.Add(1)
		go func() {
			defer l.polls.Done()
			l.polled <- poll(ctx, l.m.Kafka, groups, hot)
		}()
	}
}

// sync reads the dirty groups from both stores, in batches, and syncs each one. A batch that
// cannot be read is reported and marked again for the next poll.
func (l *loop) sync(ctx context.Context) {
	// Only the selection: a report that arrives after its group left (the watcher still arming
	// a deleted group, a poll started before) would bring back its state and metric series.
	dirty := slices.DeleteFunc(l.takeDirty(), func(g string) bool { return !l.selected(g) })
	tried := false         // a read of Kafka was tried in this pass (kafkadown.go)
	var stillDown []string // groups of the batches cut short: Kafka known down
	var downErr error
	for batch := range slices.Chunk(dirty, l.m.BatchGroups) {
		if ctx.Err() != nil {
			l.remark(batch)
			continue
		}
		legacy, batch := l.readBatch(ctx, batch)
		if len(batch) == 0 {
			continue
		}
		// Read Kafka after ZooKeeper to decide the phases; a group that commits reads its own
		// Kafka offsets again after its rate-limit wait (toKafka), as this read may be stale
		// by then.
		states, err := l.readKafka(ctx, batch, &tried)
		var down errKafkaDown
		switch {
		case errors.As(err, &down):
			// Kafka known down: one sync failure for the pass, not one per batch.
			stillDown, downErr = append(stillDown, batch...), cmp.Or(downErr, err)
			l.unreached(ctx, batch, legacy, err)
		case err != nil:
			err = fmt.Errorf("read %d kafka groups: %w", len(batch), err)
			l.syncFailed(batch, err)
			l.unreached(ctx, batch, legacy, err)
		default:
			l.syncBatch(ctx, batch, legacy, states)
		}
	}
	if len(stillDown) > 0 {
		l.syncFailed(stillDown, fmt.Errorf("read %d kafka groups: %w", len(stillDown), downErr))
	}
}

// retryLater schedules another sync of a group whose writes failed: after one poll interval,
// doubling with each failure in a row up to 64 intervals. A sync cut off by the end of ctx
// (its limiter wait or commit) marks the group again, so the flush after a stop syncs it.
func (l *loop) retryLater(ctx context.Context, st GroupStatus) {
	if ctx.Err() != nil {
		l.remark([]string{st.Group})
	}
	failed := st.KafkaErr != nil || slices.ContainsFunc(st.Writes, func(w Write) bool { return w.Err != nil })
	if l.missing != nil { // flushing
		if tps, only := onlyMissing(st.Writes); only {
			l.missing[st.Group] = tps
		} else {
			delete(l.missing, st.Group)
		}
	}
	if !failed {
		delete(l.failures, st.Group)
		delete(l.retryAt, st.Group) // a retry scheduled before is moot
		delete(l.unreachedGroups, st.Group)
		return
	}
	n := min(l.failures[st.Group], 6)
	l.failures[st.Group]++
	l.retryAt[st.Group] = l.m.Now().Add(l.m.PollInterval << n)
}
