package mirror

import (
	"context"
	"fmt"
	"slices"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The reverse mirror (--reverse): Kafka into ZooKeeper for kafka-primary groups, forward only.

// toZK mirrors Kafka into ZooKeeper (--reverse) where Kafka leads, never over an unusable
// znode, so that rolling back to ZooKeeper storage resumes where the Kafka consumers were.
func (l *loop) toZK(ctx context.Context, st *GroupStatus, v groupView) {
	offsets := map[migrate.TopicPartition]int64{}
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
		st.Writes = append(st.Writes, Write{TopicPartition: tp, Direction: ToZK, Reason: ReasonMirror, From: from, To: k})
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
	st.Writes = stillBehind(l.view(fresh[st.Group], migrate.GroupState{}), len(fresh[st.Group].LiveConsumers) > 0, st.Writes)
	if len(st.Writes) < planned {
		// ZooKeeper changed since the batch read: decide the group's phase anew at the next poll.
		l.remark([]string{st.Group})
		if len(st.Writes) == 0 {
			return
		}
		offsets = make(map[migrate.TopicPartition]int64, len(st.Writes))
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
		st.Writes = slices.DeleteFunc(st.Writes, func(w Write) bool { _, ok := left[w.TopicPartition]; return ok })
		l.remark([]string{st.Group})
	}
}
