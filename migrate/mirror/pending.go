package mirror

import (
	"context"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// A sync that read ZooKeeper but could not read Kafka (or describe the group's topics) still
// reports the group: the lag is what an operator needs most during a Kafka outage, and the
// legacy consumers keep committing to ZooKeeper meanwhile.

// unreached reports each group of a batch whose Kafka read failed with err, measured against
// Kafka as the mirror last saw it: the commits it read or had acknowledged. Each is tried again
// as a failed write is (retryLater: backing off up to 64 poll intervals), not at every poll: a
// Kafka outage must not turn into a full ZooKeeper read of the selection every poll interval.
// A ZooKeeper change still syncs its group at once (the watch), and Kafka's return every group
// (kafkaAnswered).
func (l *loop) unreached(ctx context.Context, batch []string, legacy map[string]migrate.LegacyGroup, err error) {
	for _, g := range batch {
		lg, ok := legacy[g]
		if !ok {
			lg = migrate.LegacyGroup{Group: g}
		}
		st := l.pending(l.assess(lg, l.kafka[g].groupState()), err)
		l.retryLater(ctx, st)
		l.unreachedGroups[g] = true
	}
}

// pending reports an assessed group whose writes into Kafka could not be decided or made
// because of err (GroupStatus.KafkaErr). Nothing of the loop's memory of Kafka or of the
// group's phase changes: the next successful sync decides them from fresh reads. The ZooKeeper
// read is remembered, as after any reported sync, so a rewind is reported once.
func (l *loop) pending(a assessed, err error) GroupStatus {
	st := a.st
	st.KafkaErr = err
	if st.Previous != "" {
		// The phase needs Kafka's state as it is now: the last one decided stands until then.
		st.Phase = st.Previous
	}
	if a.toKafka {
		for _, tp := range sortedTPs(a.v.zk) {
			o := a.v.zk[tp]
			w := Write{TopicPartition: tp, Direction: ToKafka, Reason: ReasonMirror, To: o.Offset, Mtime: o.Mtime, Err: err}
			if k, ok := a.v.kafka[tp]; ok {
				if k >= o.Offset {
					continue
				}
				w.From = &k
			}
			st.Writes = append(st.Writes, w)
		}
	}
	l.rememberLegacy(st.Group, a.legacyRead)
	l.m.Observer.GroupSynced(st)
	return st
}
