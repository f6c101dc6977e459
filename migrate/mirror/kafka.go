package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// kafkaDecision is what the mirror may write into Kafka for one group: plan's decision for
// each of its znodes (migrate.BuildEntries, without the group's gates: mirroring while legacy consumers
// run is the point), plus the keep-alives.
type kafkaDecision struct {
	writes  []Write     // Direction ToKafka, From/To/Reason set
	mtimes  []time.Time // the znode's mtime of each write, for its metadata (zero: a keep-alive)
	blocked map[migrate.Class]int
	reasons []string
}

// maxBlockedReasons bounds GroupStatus.BlockedReasons: a sample for the log, not a report.
const maxBlockedReasons = 3

func (d *kafkaDecision) why(tp migrate.TopicPartition, reason string) {
	if len(d.reasons) < maxBlockedReasons {
		d.reasons = append(d.reasons, tp.String()+": "+reason)
	}
}

// decideKafka decides a group's writes into Kafka from v and topics as plan would: an entry
// plan writes is mirrored at its Target (clamped under --out-of-range=clamp, adjusted under
// --offset-adjust); one plan blocks is counted by class and not written; one it skips is left.
// With keepalive, every other selected commit is re-committed unchanged if it lies inside its
// partition's log: an offset outside it makes the consumer reset (auto.offset.reset) whether it
// is kept or expires, and re-committing it would keep alive an offset plan refuses to write and
// verify reports (kafka-out-of-range).
func (l *loop) decideKafka(group string, v groupView, keepalive bool, topics map[string]migrate.TopicInfo) (kafkaDecision, error) {
	var d kafkaDecision
	entries, err := migrate.BuildEntries(group, v.offsets, migrate.GroupState{Committed: v.kafka}, topics, l.m.Policy)
	if err != nil {
		return d, err
	}
	mirrored := map[migrate.TopicPartition]bool{}
	for _, e := range entries {
		tp := migrate.TopicPartition{Topic: e.Topic, Partition: e.Partition}
		switch e.Action {
		case migrate.ActionWrite:
			w := Write{TopicPartition: tp, Direction: ToKafka, Reason: ReasonMirror, To: e.Target, Mtime: e.Mtime}
			if e.Kafka != nil {
				k := *e.Kafka
				w.From = &k
			}
			d.writes, d.mtimes = append(d.writes, w), append(d.mtimes, e.Mtime)
			mirrored[tp] = true
		case migrate.ActionBlock:
			if d.blocked == nil {
				d.blocked = map[migrate.Class]int{}
			}
			d.blocked[e.Class]++
			d.why(tp, e.Reason)
		}
	}
	if !keepalive {
		return d, nil
	}
	for _, tp := range sortedTPs(v.kafka) {
		if mirrored[tp] {
			continue
		}
		k := v.kafka[tp]
		if why := outsideLog(k, tp, topics); why != "" {
			d.why(tp, fmt.Sprintf("keep-alive of %d left out: %s", k, why))
			continue
		}
		d.writes = append(d.writes, Write{TopicPartition: tp, Direction: ToKafka, Reason: ReasonKeepalive, From: &k, To: k})
		d.mtimes = append(d.mtimes, time.Time{})
	}
	return d, nil
}

// outsideLog says why Kafka offset k of tp lies outside the partition's log as topics
// describe it ("" when inside, the ends included).
func outsideLog(k int64, tp migrate.TopicPartition, topics map[string]migrate.TopicInfo) string {
	ti, ok := topics[tp.Topic]
	if !ok || !ti.Exists {
		return fmt.Sprintf("Kafka has no topic %q", tp.Topic)
	}
	r, ok := ti.Partitions[tp.Partition]
	switch {
	case !ok:
		return fmt.Sprintf("topic %q has no partition %d", tp.Topic, tp.Partition)
	case k < r.LogStart:
		return fmt.Sprintf("below log start %d", r.LogStart)
	case k > r.LogEnd:
		return fmt.Sprintf("above log end %d", r.LogEnd)
	}
	return ""
}

// toKafka commits what decideKafka decides. The batch's read of Kafka may be stale by the time
// the limiter lets this group through (a simple consumer commits into an Empty group without
// joining), so Kafka is read again after the wait and the writes decided again from it: only a
// write decided again with the same target, and that stillValid allows, is committed. A commit
// never moves Kafka backwards, except against a consumer committing in the instant between
// that read and the commit. The topics were described just after the batch was read; with a
// limiter, whose wait may be long (retention raises log starts, a topic may be re-created),
// they are described again too. An error means nothing could be decided: nothing was written.
func (l *loop) toKafka(ctx context.Context, st *GroupStatus, v groupView, keepalive bool, topics map[string]migrate.TopicInfo) error {
	now := l.m.Now()
	d, err := l.decideKafka(st.Group, v, keepalive, topics)
	if err != nil {
		return err
	}
	st.Blocked, st.BlockedReasons = d.blocked, d.reasons
	st.Writes = d.writes
	commits := make([]migrate.Commit, len(d.writes))
	for i, w := range d.writes {
		commits[i] = migrate.Commit{TopicPartition: w.TopicPartition, Offset: w.To}
		if l.m.Metadata != nil {
			commits[i].Metadata = l.m.Metadata(st.Group, d.mtimes[i])
		}
	}
	if len(commits) == 0 || !l.m.Execute {
		if keepalive {
			l.keptAlive[st.Group] = now
		}
		return nil
	}
	if !l.mayWrite(ctx, st) {
		return nil
	}
	if err := l.wait(ctx, len(commits)); err != nil {
		failAll(st.Writes, fmt.Errorf("commit group %q: rate limit: %w", st.Group, err))
		return nil
	}
	fk, err := l.readAgain(ctx, st.Group, v.topics(keepalive), &topics)
	if err != nil {
		failAll(st.Writes, err)
		l.kafkaFailed(err)
		return nil
	}
	if fk.Active() {
		// A consumer joined meanwhile: the broker would refuse the commit anyway.
		for i := range st.Writes {
			st.Writes[i].Refused = true
		}
		l.refused(st)
		return nil
	}
	fv := v
	fv.kafka = l.selectedCommits(fk)
	again, err := l.decideKafka(st.Group, fv, keepalive, topics)
	if err != nil {
		failAll(st.Writes, fmt.Errorf("commit group %q: decide again before the commit: %w", st.Group, err))
		return nil
	}
	planned := len(commits)
	commits, st.Writes = stillDecided(again, commits, st.Writes, st)
	if commits, st.Writes = stillValid(fk, commits, st.Writes); len(commits) < planned {
		// Kafka changed since the batch read: sync the group again at the next poll, from a
		// fresh read of both stores, to decide its phase anew.
		l.remark([]string{st.Group})
		if len(commits) == 0 {
			return nil
		}
	}
	l.commit(ctx, st, commits, keepalive, now)
	return nil
}

// readAgain reads the group's Kafka state again after the rate-limit wait and, with a limiter,
// describes the names, the topics its decision needs, again (replacing *topics).
func (l *loop) readAgain(ctx context.Context, group string, names []string, topics *map[string]migrate.TopicInfo) (migrate.GroupState, error) {
	fresh, err := l.m.Kafka.Groups(ctx, []string{group})
	if err != nil {
		return migrate.GroupState{}, fmt.Errorf("commit group %q: read kafka again before the commit: %w", group, err)
	}
	fk, ok := fresh[group]
	if !ok {
		return migrate.GroupState{}, fmt.Errorf("commit group %q: read kafka again before the commit: no answer for the group", group)
	}
	if l.m.Limiter == nil {
		return fk, nil
	}
	if len(names) > 0 { // never an empty metadata request: it means "all topics"
		described, err := l.m.Kafka.Topics(ctx, names)
		if err != nil {
			return migrate.GroupState{}, fmt.Errorf("commit group %q: describe %d topics again before the commit: %w", group, len(names), err)
		}
		*topics = described
	}
	return fk, nil
}

// stillDecided keeps the commits (and their writes, in step) that the decision made again
// after the wait still makes with the same target and reason. The blocked partitions are the
// new decision's: it is the later read of the stores.
func stillDecided(again kafkaDecision, commits []migrate.Commit, ws []Write, st *GroupStatus) ([]migrate.Commit, []Write) {
	type key struct {
		to     int64
		reason string
	}
	still := make(map[migrate.TopicPartition]key, len(again.writes))
	for _, w := range again.writes {
		still[w.TopicPartition] = key{w.To, w.Reason}
	}
	var keptC []migrate.Commit
	var keptW []Write
	for i, w := range ws {
		if k, ok := still[w.TopicPartition]; ok && k == (key{w.To, w.Reason}) {
			keptC = append(keptC, commits[i])
			keptW = append(keptW, w)
		}
	}
	st.Blocked, st.BlockedReasons = again.blocked, again.reasons
	return keptC, keptW
}

// commit sends the commits and records each partition's outcome in st.Writes.
func (l *loop) commit(ctx context.Context, st *GroupStatus, commits []migrate.Commit, keepalive bool, now time.Time) {
	wctx, release, held := l.holdLease(ctx, st)
	if !held {
		return
	}
	res, err := l.m.Committer.Commit(wctx, st.Group, commits)
	release()
	if errors.Is(err, migrate.ErrGroupActive) {
		for i := range st.Writes {
			st.Writes[i].Refused = true
		}
		l.refused(st)
		return
	}
	if err != nil {
		failAll(st.Writes, err)
		l.kafkaFailed(err) // a whole commit failed after the adapter's retries: Kafka is down
		return
	}
	acked := l.m.Now()
	byTP := make(map[migrate.TopicPartition]error, len(res))
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
		case errors.Is(err, migrate.ErrGroupActive):
			w.Refused, refused = true, true
		case err != nil:
			w.Err, failed = err, true
		default:
			w.Acked = acked
		}
	}
	if refused {
		l.refused(st)
	} else if keepalive && !failed {
		l.keptAlive[st.Group] = now
	}
}
