package mirror

import "github.com/zk2kafka/zk2kafka/migrate"

// A sync that read ZooKeeper but could not read Kafka (or describe the group's topics) still
// reports the group: the lag is what an operator needs most during a Kafka outage, and the
// legacy consumers keep committing to ZooKeeper meanwhile.

// unreached reports each group of a batch whose Kafka read failed with err, measured against
// Kafka as the mirror last saw it: the commits it read or had acknowledged.
func (l *loop) unreached(batch []string, legacy map[string]migrate.LegacyGroup, err error) {
	for _, g := range batch {
		lg, ok := legacy[g]
		if !ok {
			lg = migrate.LegacyGroup{Group: g}
		}
		l.pending(l.assess(lg, l.kafka[g]), err)
	}
}

// pending reports an assessed group whose writes into Kafka could not be decided or made
// because of err (GroupStatus.KafkaErr). Nothing of the loop's memory of Kafka or of the
// group's phase changes: the next successful sync decides them from fresh reads. The ZooKeeper
// read is remembered, as after any reported sync, so a rewind is reported once.
func (l *loop) pending(a assessed, err error) {
	st := a.st
	st.KafkaErr = err
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
}
