package mirror

import (
	"context"
	"errors"
	"maps"
	"slices"
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
// budget, and a success of either ends the state (kafkaAnswered). A read not answered within a
// poll interval reports the lag of the batch's ZooKeeper read meanwhile (legacyLag).
func (l *loop) readKafka(ctx context.Context, batch []string, legacy map[string]migrate.LegacyGroup, tried *bool) (map[string]migrate.GroupState, error) {
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
	states, err := l.groupsOrLag(rctx, batch, legacy)
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

// groupsOrLag reads the batch's Kafka groups; when Kafka has not answered within one poll
// interval, it reports the lag of each group as read from ZooKeeper (legacyLag) and waits on.
func (l *loop) groupsOrLag(ctx context.Context, batch []string, legacy map[string]migrate.LegacyGroup) (map[string]migrate.GroupState, error) {
	type read struct {
		states map[string]migrate.GroupState
		err    error
	}
	done := make(chan read, 1)
	go func() {
		states, err := l.m.Kafka.Groups(ctx, batch)
		done <- read{states, err}
	}()
	slow := time.NewTimer(l.m.PollInterval)
	defer slow.Stop()
	select {
	case r := <-done:
		return r.states, r.err
	case <-slow.C:
		l.legacyLag(batch, legacy)
	}
	r := <-done
	return r.states, r.err
}

// legacyLag reports the lag of each group of batch already seen in Kafka, as of its ZooKeeper
// read, against Kafka's last acknowledged commits (Observer.LegacyLag).
func (l *loop) legacyLag(batch []string, legacy map[string]migrate.LegacyGroup) {
	for _, g := range batch {
		seen, ok := l.kafka[g]
		lg, read := legacy[g]
		if !ok || !read {
			continue
		}
		var st GroupStatus
		st.measure(l.view(lg, seen.groupState()))
		l.m.Observer.LegacyLag(g, st.Lag)
	}
}
