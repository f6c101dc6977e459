package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// decidePhase is the phase of a group from what both stores show now and its previous phase.
// kafka-primary is sticky while no legacy consumer is registered: once Kafka consumers took
// over, a group that goes Empty for a bounce must not be written from ZooKeeper again.
func decidePhase(prev Phase, legacyAlive, kafkaActive, kafkaAhead bool) Phase {
	switch {
	case legacyAlive && (kafkaActive || kafkaAhead):
		return PhaseSwitching
	case legacyAlive:
		return PhaseZKPrimary // also a rollback: legacy consumers are back
	case kafkaActive || kafkaAhead || prev == PhaseKafkaPrimary:
		return PhaseKafkaPrimary
	}
	return PhaseZKPrimary
}

// groupView is one group's offsets in both stores, restricted to the selected topics.
type groupView struct {
	zk      map[TopicPartition]LegacyOffset // valid znodes only
	invalid map[TopicPartition]bool         // znodes that exist but cannot be used: never overwritten
	kafka   map[TopicPartition]int64
}

func (l *loop) view(lg LegacyGroup, ks GroupState) groupView {
	v := groupView{zk: map[TopicPartition]LegacyOffset{}, invalid: map[TopicPartition]bool{}, kafka: map[TopicPartition]int64{}}
	for _, o := range lg.Offsets {
		if !l.m.Filter.keepsOffset(o) {
			continue
		}
		tp := TopicPartition{Topic: o.Topic, Partition: o.Partition}
		if o.Invalid != "" || o.Partition < 0 {
			v.invalid[tp] = true
			continue
		}
		v.zk[tp] = o
	}
	for tp, off := range ks.Committed {
		if l.m.Filter.MatchTopic(tp.Topic) {
			v.kafka[tp] = off
		}
	}
	return v
}

// syncGroup decides a group's phase and writes what it needs, forward only.
func (l *loop) syncGroup(ctx context.Context, lg LegacyGroup, ks GroupState) GroupStatus {
	g := lg.Group
	v := l.view(lg, ks)
	st := GroupStatus{Group: g, Previous: l.phase[g], LegacyAlive: len(lg.LiveConsumers) > 0,
		KafkaState: ks.State, Members: ks.Members, Invalid: len(v.invalid), DryRun: !l.m.Execute}
	ahead := false
	parts := map[TopicPartition]bool{}
	for tp, o := range v.zk {
		parts[tp] = true
		k, ok := v.kafka[tp]
		switch {
		case !ok:
			st.Missing++
		case k > o.Offset:
			ahead = true
			st.Lead += k - o.Offset
		default:
			st.Lag += o.Offset - k
		}
	}
	for tp := range v.kafka {
		parts[tp] = true
	}
	st.Partitions = len(parts)
	active := ks.Active()
	st.Phase = decidePhase(st.Previous, st.LegacyAlive, active, ahead)
	switch {
	case st.Phase != PhaseKafkaPrimary && !active:
		l.toKafka(ctx, &st, v)
	case st.Phase == PhaseKafkaPrimary && l.m.Reverse && !st.LegacyAlive:
		l.toZK(ctx, &st, v)
	}
	l.phase[g] = st.Phase
	// Remember Kafka as it is after our own commits, so the next poll sees only others' changes.
	ks.Committed = maps.Clone(ks.Committed)
	for _, w := range st.Writes {
		if w.Direction == ToKafka && w.Err == nil && !w.Refused && l.m.Execute {
			if ks.Committed == nil {
				ks.Committed = map[TopicPartition]int64{}
			}
			ks.Committed[w.TopicPartition] = w.To
		}
	}
	l.kafka[g] = ks
	return st
}

func sortedTPs[V any](m map[TopicPartition]V) []TopicPartition {
	return slices.SortedFunc(maps.Keys(m), func(a, b TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// toKafka commits every partition where ZooKeeper leads, and, when the keep-alive is due, every
// other committed partition at its unchanged offset. The batch's read of Kafka may be stale by
// the time the limiter lets this group through (a simple consumer commits into an Empty group
// without joining), so Kafka is read again after the wait and only what still holds is
// committed: a commit never moves Kafka backwards, except against a consumer committing in the
// instant between that read and the commit.
func (l *loop) toKafka(ctx context.Context, st *GroupStatus, v groupView) {
	now := l.m.Now()
	keepalive := st.Phase == PhaseZKPrimary && now.Sub(l.keptAlive[st.Group]) >= l.m.KeepaliveInterval
	var commits []Commit
	add := func(tp TopicPartition, from *int64, to int64, reason string, mtime time.Time) {
		w := MirrorWrite{TopicPartition: tp, Direction: ToKafka, Reason: reason, From: from, To: to}
		st.Writes = append(st.Writes, w)
		c := Commit{TopicPartition: tp, Offset: to}
		if l.m.Metadata != nil {
			c.Metadata = l.m.Metadata(st.Group, mtime)
		}
		commits = append(commits, c)
	}
	for _, tp := range sortedTPs(v.zk) {
		o := v.zk[tp]
		k, ok := v.kafka[tp]
		switch {
		case !ok:
			add(tp, nil, o.Offset, ReasonMirror, o.Mtime)
		case o.Offset > k:
			add(tp, &k, o.Offset, ReasonMirror, o.Mtime)
		}
	}
	if keepalive {
		for _, tp := range sortedTPs(v.kafka) {
			if _, mirrored := v.zk[tp]; mirrored && v.zk[tp].Offset > v.kafka[tp] {
				continue
			}
			k := v.kafka[tp]
			add(tp, &k, k, ReasonKeepalive, time.Time{})
		}
	}
	if len(commits) == 0 || !l.m.Execute {
		if keepalive {
			l.keptAlive[st.Group] = now
		}
		return
	}
	if !l.mayWrite(ctx, st) {
		return
	}
	if err := l.wait(ctx, len(commits)); err != nil {
		failAll(st.Writes, fmt.Errorf("commit group %q: rate limit: %w", st.Group, err))
		return
	}
	fresh, err := l.m.Kafka.Groups(ctx, []string{st.Group})
	if err != nil {
		failAll(st.Writes, fmt.Errorf("commit group %q: read kafka again before the commit: %w", st.Group, err))
		return
	}
	fk := fresh[st.Group]
	if fk.Active() {
		// A consumer joined meanwhile: the broker would refuse the commit anyway.
		for i := range st.Writes {
			st.Writes[i].Refused = true
		}
		l.refused(st)
		return
	}
	planned := len(commits)
	if commits, st.Writes = stillValid(fk, commits, st.Writes); len(commits) < planned {
		// Kafka changed since the batch read: sync the group again at the next poll, from a
		// fresh read of both stores, to decide its phase anew.
		l.remark([]string{st.Group})
		if len(commits) == 0 {
			return
		}
	}
	wctx, release, held := l.holdLease(ctx, st)
	if !held {
		return
	}
	res, err := l.m.Committer.Commit(wctx, st.Group, commits)
	release()
	if errors.Is(err, ErrGroupActive) {
		for i := range st.Writes {
			st.Writes[i].Refused = true
		}
		l.refused(st)
		return
	}
	if err != nil {
		failAll(st.Writes, err)
		return
	}
	byTP := make(map[TopicPartition]error, len(res))
	for _, r := range res {
		byTP[r.TopicPartition] = r.Err
	}
	refused, failed := false, false
	for i := range st.Writes {
		w := &st.Writes[i]
		err, answered := byTP[w.TopicPartition]
		switch {
		case !answered:
			w.Err = fmt.Errorf("commit group %q %s: no answer for the partition", st.Group, w.TopicPartition)
			failed = true
		case errors.Is(err, ErrGroupActive):
			w.Refused, refused = true, true
		case err != nil:
			w.Err, failed = err, true
		}
	}
	if refused {
		l.refused(st)
	} else if keepalive && !failed {
		l.keptAlive[st.Group] = now
	}
}

// refused turns a commit refused because the Kafka group is active into a phase change: Kafka
// consumers are there, so the group is no longer ZooKeeper's alone.
func (l *loop) refused(st *GroupStatus) {
	if st.LegacyAlive {
		st.Phase = PhaseSwitching
	} else {
		st.Phase = PhaseKafkaPrimary
	}
}

// toZK mirrors Kafka into ZooKeeper (--reverse) where Kafka leads, never over an unusable
// znode, so that rolling back to ZooKeeper storage resumes where the Kafka consumers were.
func (l *loop) toZK(ctx context.Context, st *GroupStatus, v groupView) {
	offsets := map[TopicPartition]int64{}
	for _, tp := range sortedTPs(v.kafka) {
		k := v.kafka[tp]
		if v.invalid[tp] {
			continue
		}
		o, ok := v.zk[tp]
		var from *int64
		if ok {
			if k <= o.Offset {
				continue
			}
			from = &o.Offset
		}
		st.Writes = append(st.Writes, MirrorWrite{TopicPartition: tp, Direction: ToZK, Reason: ReasonMirror, From: from, To: k})
		offsets[tp] = k
	}
	if len(offsets) == 0 || !l.m.Execute || !l.mayWrite(ctx, st) {
		return
	}
	if err := l.wait(ctx, len(offsets)); err != nil {
		failAll(st.Writes, fmt.Errorf("write zookeeper offsets of group %q: rate limit: %w", st.Group, err))
		return
	}
	// The batch read may be stale by now: a legacy consumer that registered and committed
	// during a rollback must not get Kafka's lower value over its own. Read the group again
	// and write only where it still has no live consumer and Kafka still leads.
	fresh, err := l.readLegacy(ctx, []string{st.Group})
	if err != nil {
		failAll(st.Writes, fmt.Errorf("write zookeeper offsets of group %q: read it again before writing: %w", st.Group, err))
		return
	}
	planned := len(offsets)
	st.Writes = stillBehind(l.view(fresh[st.Group], GroupState{}), len(fresh[st.Group].LiveConsumers) > 0, st.Writes)
	if len(st.Writes) < planned {
		// ZooKeeper changed since the batch read: decide the group's phase anew at the next poll.
		l.remark([]string{st.Group})
		if len(st.Writes) == 0 {
			return
		}
		offsets = make(map[TopicPartition]int64, len(st.Writes))
		for _, w := range st.Writes {
			offsets[w.TopicPartition] = w.To
		}
	}
	wctx, release, held := l.holdLease(ctx, st)
	if !held {
		return
	}
	left, err := l.m.LegacyWriter.AdvanceOffsets(wctx, st.Group, offsets)
	release()
	if err != nil {
		failAll(st.Writes, fmt.Errorf("write zookeeper offsets of group %q: %w", st.Group, err))
		return
	}
	if len(left) > 0 {
		// ZooKeeper moved at or above Kafka after the fresh read (a legacy commit won the
		// race): those writes did not happen, and the group's phase is decided anew.
		st.Writes = slices.DeleteFunc(st.Writes, func(w MirrorWrite) bool { _, ok := left[w.TopicPartition]; return ok })
		l.remark([]string{st.Group})
	}
}

func (l *loop) wait(ctx context.Context, n int) error {
	if l.m.Limiter == nil {
		return nil
	}
	return l.m.Limiter.Wait(ctx, n)
}

func failAll(ws []MirrorWrite, err error) {
	for i := range ws {
		ws[i].Err = err
	}
}
