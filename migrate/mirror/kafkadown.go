package mirror

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// While Kafka is down, each read of it takes the adapter's whole retry budget to fail (30 s by
// default), and the loop, which reads ZooKeeper and Kafka in turn, would report a ZooKeeper
// change only that often: the lag an operator watches would move in 30 s steps through an
// outage. Once a whole read has failed, the loop treats Kafka as down until a read succeeds:
// a sync tries Kafka for one poll interval only, and only its first batch tries at all.

// errKafkaDown marks the failure of a read cut short because Kafka is known down; it wraps the
// failure that made it so, so the reason of a write left pending stays that failure's.
type errKafkaDown struct{ err error }

func (e errKafkaDown) Error() string { return "kafka still down: " + e.err.Error() }
func (e errKafkaDown) Unwrap() error { return e.err }

// readKafka reads the batch's Kafka group states. While Kafka is down, the read gets one poll
// interval, and when *tried (an earlier batch of this pass tried already) none: it fails at
// once with the failure that made Kafka down. The background poll still reads with the whole
// budget, and a success of either ends the state (kafkaAnswered).
func (l *loop) readKafka(ctx context.Context, batch []string, tried *bool) (map[string]migrate.GroupState, error) {
	down := l.kafkaDown
	if down != nil && *tried {
		return nil, errKafkaDown{down}
	}
	*tried = true
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if down != nil {
		rctx, cancel = context.WithTimeoutCause(ctx, l.m.PollInterval, errKafkaDown{down})
	}
	defer cancel()
	states, err := l.m.Kafka.Groups(rctx, batch)
	switch {
	case err == nil:
		l.kafkaAnswered()
	case ctx.Err() == nil && rctx.Err() != nil:
		// Cut short by the poll interval: the adapter says only "deadline exceeded".
		err = context.Cause(rctx)
	default:
		l.kafkaFailed(err)
	}
	return states, err
}

// kafkaFailed records a failed whole read or commit of Kafka (made with the whole budget) as
// the reason Kafka is down, unless the run is stopping. A broker that goes away between a sync's
// read and its commit fails the commit first: without this, the next sync's read would take the
// whole budget again before the loop knew.
// Only a failure the adapter calls unreachable counts (Mirror.KafkaUnreachable): one group's
// refusal (an ACL, its coordinator without a leader) fails the whole read of its batch too,
// and taken for an outage it would cut every later batch short at every pass.
func (l *loop) kafkaFailed(err error) {
	var cut errKafkaDown
	if l.kafkaDown == nil && !errors.As(err, &cut) && !errors.Is(err, context.Canceled) &&
		l.m.KafkaUnreachable != nil && l.m.KafkaUnreachable(err) {
		l.kafkaDown = err
	}
}

// kafkaAnswered ends the down state: the groups waiting for a retry because Kafka could not be
// read are synced at the next pass, not at the end of their backoff. Groups waiting for a
// failure of their own (a refused write) keep their backoff.
func (l *loop) kafkaAnswered() {
	if l.kafkaDown == nil {
		return
	}
	l.kafkaDown = nil
	due := slices.Collect(maps.Keys(l.unreachedGroups))
	clear(l.unreachedGroups)
	for _, g := range due {
		delete(l.retryAt, g)
	}
	l.remark(due)
	l.poke()
}

// lagIfSlow keeps the lag of the batch's groups true while the batch waits for Kafka: the first
// read or commit after Kafka went away takes the adapter's whole retry budget to fail (30 s by
// default), and the loop, which reads ZooKeeper and Kafka in turn, waits for it. After each poll
// interval of waiting, the groups of the batch already seen in Kafka are read from ZooKeeper
// again and their lag reported against Kafka's last acknowledged commits (Observer.LegacyLag),
// off the loop's goroutine and from a copy of those commits (Kafka's tables are replaced, never
// changed). A group whose sync was reported (groupSynced) is not reported again by it, and
// nothing is after stop returns.
func (l *loop) lagIfSlow(ctx context.Context, batch []string) (stop func()) {
	seen := make(map[string]kafkaSeen, len(batch))
	var names []string
	for _, g := range batch {
		if s, ok := l.kafka[g]; ok {
			seen[g] = s
			names = append(names, g)
		}
	}
	if len(names) == 0 {
		return func() {}
	}
	r := &lagReporter{synced: map[string]bool{}, latest: map[string]int64{}}
	rctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(l.m.PollInterval)
		defer tick.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
			}
			legacy, err := l.readLegacy(rctx, names)
			if err != nil {
				continue // ZooKeeper's own failure is the loop's to report
			}
			r.report(names, func(g string) {
				var st GroupStatus
				st.measure(l.view(legacy[g], seen[g].groupState()))
				r.latest[g] = st.Lag
				l.m.Observer.LegacyLag(g, st.Lag)
			})
		}
	}()
	l.slow = r
	return func() {
		cancel()
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
		<-finished
		l.slow = nil
	}
}

// lagReporter is lagIfSlow's state, shared with the loop's groupSynced.
type lagReporter struct {
	mu     sync.Mutex
	done   bool
	synced map[string]bool
	latest map[string]int64 // the last lag reported of each group, from a read newer than the batch's
}

// report calls fn for each of names not synced yet, unless stopped.
func (r *lagReporter) report(names []string, fn func(g string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range names {
		if !r.done && !r.synced[g] {
			fn(g)
		}
	}
}

// groupSynced reports a group's sync, after any LegacyLag of it under way. A sync that wrote
// nothing (the outage's first call failed) measured its lag from the batch's ZooKeeper read,
// older than the one LegacyLag reported last: that lag stands, or the gauge would fall back to
// its value before the outage.
func (l *loop) groupSynced(st GroupStatus) {
	if r := l.slow; r != nil {
		r.mu.Lock()
		r.synced[st.Group] = true
		if lag, ok := r.latest[st.Group]; ok && st.Written() == 0 {
			st.Lag = lag
		}
		r.mu.Unlock()
	}
	l.m.Observer.GroupSynced(st)
}
