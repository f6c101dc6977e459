package mirror

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
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
	offsets []migrate.LegacyOffset                          // the selected znodes as read: what the mirror's entries classify
	zk      map[migrate.TopicPartition]migrate.LegacyOffset // usable znodes only, Offset after --offset-adjust
	invalid map[migrate.TopicPartition]bool                 // znodes that exist but cannot be used: never overwritten
	kafka   map[migrate.TopicPartition]int64
}

// view is the group as the phases see it: its selected znodes, and the offsets plan's entries
// stand for (migrate.UsableOffsets: after --offset-adjust; two znodes of one partition are
// unusable).
func (l *loop) view(lg migrate.LegacyGroup, ks migrate.GroupState) groupView {
	var v groupView
	for _, o := range lg.Offsets {
		if l.m.Filter.KeepsOffset(o) {
			v.offsets = append(v.offsets, o)
		}
	}
	v.zk, v.invalid = migrate.UsableOffsets(v.offsets, l.m.Policy.OffsetAdjust)
	v.kafka = l.selectedCommits(ks)
	return v
}

// selectedCommits is the group's Kafka commits of the selected topics.
func (l *loop) selectedCommits(ks migrate.GroupState) map[migrate.TopicPartition]int64 {
	out := map[migrate.TopicPartition]int64{}
	match := l.m.Filter.CommitTopics(l.m.Translator)
	for tp, off := range ks.Committed {
		if match(tp.Topic) {
			out[tp] = off
		}
	}
	return out
}

// assessed is one group of a batch with its phase decided, before anything is written.
type assessed struct {
	st        GroupStatus
	v         groupView
	ks        migrate.GroupState
	toKafka   bool // ZooKeeper is mirrored into Kafka this sync
	keepalive bool // and the keep-alive is due
	// legacyRead is what st.Rewinds compared with the previous read: remembered once the group's
	// status is reported, so a sync that fails reports its rewinds again at the next one.
	legacyRead map[migrate.TopicPartition]migrate.LegacyOffset
}

// assess decides a group's phase from both stores as read.
func (l *loop) assess(lg migrate.LegacyGroup, ks migrate.GroupState) assessed {
	g := lg.Group
	v := l.view(lg, ks)
	st := GroupStatus{Group: g, Previous: l.phase[g], LegacyAlive: len(lg.LiveConsumers) > 0,
		KafkaState: ks.State, Members: ks.Members, Invalid: len(v.invalid), DryRun: !l.m.Execute}
	st.Rewinds = l.rewinds(g, v.zk)
	if k := l.m.Filter.GroupMap.Kafka(g); k != g {
		st.KafkaGroup = k
	}
	ahead := st.measure(v)
	active := ks.Active()
	st.Phase = decidePhase(st.Previous, st.LegacyAlive, active, ahead)
	a := assessed{st: st, v: v, ks: ks, toKafka: st.Phase != PhaseKafkaPrimary && !active, legacyRead: v.zk}
	a.keepalive = a.toKafka && st.Phase == PhaseZKPrimary && l.m.Now().Sub(l.keptAlive[g]) >= l.m.KeepaliveInterval
	return a
}

// rewinds compares a group's usable ZooKeeper offsets with the last reported read of each;
// sorted by partition.
func (l *loop) rewinds(g string, zk map[migrate.TopicPartition]migrate.LegacyOffset) []Rewind {
	last := l.legacy[g]
	var out []Rewind
	for tp, o := range zk {
		if was, ok := last.get(tp); ok && o.Offset < was {
			out = append(out, Rewind{TopicPartition: tp, From: was, To: o.Offset})
		}
	}
	slices.SortFunc(out, func(a, b Rewind) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// rememberLegacy keeps a reported read of a group's ZooKeeper offsets for the next comparison.
// A sync that did not read ZooKeeper (a kafka-primary group) changes nothing.
func (l *loop) rememberLegacy(g string, zk map[migrate.TopicPartition]migrate.LegacyOffset) {
	if len(zk) == 0 {
		return
	}
	last := l.legacy[g].toMap()
	if last == nil {
		last = make(map[migrate.TopicPartition]int64, len(zk))
	}
	for tp, o := range zk {
		last[tp] = o.Offset
	}
	l.legacy[g] = tableOf(last)
}

// topics names the topics a's decision needs described.
func (a assessed) topics() []string { return a.v.topics(a.keepalive) }

// topics names the topics a decision into Kafka needs described: those of the znodes that name
// one (as ReadInputs describes them for plan), and of the Kafka commits with keepalive (it
// re-commits only offsets inside the log). Sorted, without repeats.
func (v groupView) topics(keepalive bool) []string {
	var out []string
	for _, o := range v.offsets {
		if o.Invalid == "" {
			out = append(out, o.Topic)
		}
	}
	if keepalive {
		for tp := range v.kafka {
			out = append(out, tp.Topic)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// syncBatch decides the phases of a batch read from both stores, describes the topics of the
// groups to mirror into Kafka (after ZooKeeper was read: a legacy consumer's offset is never
// above a log end read later), and syncs each group. Groups whose writes cannot be decided
// (the description failed) are reported and marked again for the next poll.
func (l *loop) syncBatch(ctx context.Context, batch []string, legacy map[string]migrate.LegacyGroup, states map[string]migrate.GroupState) {
	groups := make([]assessed, 0, len(batch))
	var names []string
	for _, g := range batch {
		lg, ok := legacy[g]
		if !ok {
			lg = migrate.LegacyGroup{Group: g}
		}
		a := l.assess(lg, states[g])
		if a.toKafka {
			names = append(names, a.topics()...)
		}
		groups = append(groups, a)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var topics map[string]migrate.TopicInfo
	var describeErr error
	if len(names) > 0 { // never an empty metadata request: it means "all topics"
		if topics, describeErr = l.m.Kafka.Topics(ctx, names); describeErr != nil {
			describeErr = fmt.Errorf("describe %d topics in kafka: %w", len(names), describeErr)
		}
	}
	var failed []string
	var firstErr error
	for _, a := range groups {
		var st GroupStatus
		var err error
		if a.toKafka && describeErr != nil {
			err = describeErr
		} else {
			st, err = l.syncGroup(ctx, a, topics)
		}
		if err != nil {
			failed = append(failed, a.st.Group)
			err = fmt.Errorf("decide the writes of group %q: %w", a.st.Group, err)
			firstErr = cmp.Or(firstErr, err)
			l.pending(a, err)
			continue
		}
		l.retryLater(ctx, st)
		l.rememberLegacy(st.Group, a.legacyRead)
		l.groupSynced(st)
		delete(l.health.unsynced, st.Group)
		l.beat()
	}
	if len(failed) > 0 {
		l.syncFailed(failed, firstErr)
		l.remark(failed)
	}
}

// syncGroup writes what an assessed group needs, forward only; topics describes a.topics()
// when a.toKafka. An error means the writes could not be decided (an incomplete description):
// nothing was written and the group is to be synced again.
func (l *loop) syncGroup(ctx context.Context, a assessed, topics map[string]migrate.TopicInfo) (GroupStatus, error) {
	st, ks := a.st, a.ks
	switch {
	case a.toKafka:
		if err := l.toKafka(ctx, &st, a.v, a.keepalive, topics); err != nil {
			return st, err
		}
	case st.Phase == PhaseKafkaPrimary && l.m.Reverse && !st.LegacyAlive:
		l.toZK(ctx, &st, a.v)
	}
	g := st.Group
	l.phase[g] = st.Phase
	// Remember Kafka as it is after our own commits, so the next poll sees only others' changes,
	// and measure the lag again: a lag that stays up after a successful write is a false alarm.
	ks.Committed = maps.Clone(ks.Committed)
	after := a.v
	after.kafka = maps.Clone(a.v.kafka)
	for _, w := range st.Writes {
		if w.Direction == ToKafka && w.Err == nil && !w.Refused && l.m.Execute {
			if ks.Committed == nil {
				ks.Committed = map[migrate.TopicPartition]int64{}
			}
			ks.Committed[w.TopicPartition] = w.To
			after.kafka[w.TopicPartition] = w.To
		}
	}
	st.measure(after)
	l.kafka[g] = seenOf(ks)
	return st, nil
}

// measure sets the group's lag, lead, missing and partition counts from v and reports whether
// Kafka leads anywhere.
func (st *GroupStatus) measure(v groupView) (ahead bool) {
	st.Lag, st.Lead, st.Missing = 0, 0, 0
	parts := map[migrate.TopicPartition]bool{}
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
	return ahead
}

func sortedTPs[V any](m map[migrate.TopicPartition]V) []migrate.TopicPartition {
	return slices.SortedFunc(maps.Keys(m), func(a, b migrate.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
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

// wait is the rate limiter's wait, with the loop's heartbeat kept going meanwhile: a long wait
// (a large group at a low --max-commits-per-second) is progress, not a stuck loop.
func (l *loop) wait(ctx context.Context, n int) error {
	if l.m.Limiter == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- l.m.Limiter.Wait(ctx, n) }()
	t := time.NewTicker(l.m.PollInterval)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			l.beat()
		}
	}
}

func failAll(ws []Write, err error) {
	for i := range ws {
		ws[i].Err = err
	}
}
