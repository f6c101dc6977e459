package mirror

import (
	"context"
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// keepalivesDue returns the groups due for a keep-alive. The scan walks every group, and
// keep-alives are hours apart (half the offsets retention), so it runs at most every
// sixteenth of the interval, not at every poll: a keep-alive is at most that late.
func (l *loop) keepalivesDue(now time.Time) []string {
	if now.Sub(l.keepaliveScan) < max(l.m.PollInterval, l.m.KeepaliveInterval/16) {
		return nil
	}
	l.keepaliveScan = now
	var due []string
	for _, g := range l.groups {
		// A group waiting for the retry of a failed write keeps its keep-alive for that retry.
		// Only an inactive zk-primary group is kept alive (toKafka): any other would never
		// have keptAlive set and would be re-read from ZooKeeper on every tick.
		_, waiting := l.retryAt[g]
		keepsAlive := l.phase[g] == PhaseZKPrimary && !l.kafka[g].Active()
		if !waiting && keepsAlive && now.Sub(l.keptAlive[g]) >= l.m.KeepaliveInterval {
			due = append(due, g)
		}
	}
	return due
}

// hotGroups are the groups whose state and Kafka commits the poll reads, besides those Kafka
// lists as active: those Kafka consumers own or share (not zk-primary, or active in Kafka), and every group
// under Reverse, whose rollback copy follows Kafka's commits. A zk-primary group nobody
// consumes from Kafka changes its commits only by the mirror's own writes, or by a client
// committing without joining, and every write the mirror makes reads Kafka again first
// (toKafka): polling its commits would only refresh the phase report. That poll is what cost
// most at scale (every offset of every group fetched and compared each interval); such a
// group's commits are read at its next ZooKeeper change, keep-alive and full resync instead.
func (l *loop) hotGroups() map[string]bool {
	hot := map[string]bool{}
	for _, g := range l.groups {
		if l.m.Reverse || l.phase[g] != PhaseZKPrimary || l.kafka[g].Active() {
			hot[g] = true
		}
	}
	return hot
}

// pollResult is one poll of Kafka.
type pollResult struct {
	groups []string
	// states holds the state, members and commits of the groups read whole: the hot ones and
	// those Kafka lists as active now. Of the others the poll learnt only that they are still
	// not active, which is what their last sync saw (they would be hot otherwise).
	states map[string]migrate.GroupState
	err    error
}

// poll asks Kafka which groups are active, then reads whole the hot groups and the active ones.
// An idle cluster costs one listing per broker, whatever the number of groups.
func poll(ctx context.Context, k migrate.KafkaState, groups []string, hot map[string]bool) pollResult {
	p := pollResult{groups: groups}
	active, err := k.ActiveGroups(ctx, groups)
	if err != nil {
		p.err = err
		return p
	}
	var full []string
	for _, g := range groups {
		if _, ok := active[g]; ok || hot[g] {
			full = append(full, g)
		}
	}
	if len(full) == 0 {
		return p
	}
	p.states, p.err = k.Groups(ctx, full)
	return p
}

// pollDone marks the groups whose Kafka state changed since their last sync (a consumer joined,
// left, or, for a group polled with its commits, committed).
func (l *loop) pollDone(p pollResult) {
	l.polling = false
	if p.err != nil {
		l.kafkaFailed(p.err)
		l.syncFailed(p.groups, fmt.Errorf("poll kafka group states: %w", p.err))
		return
	}
	l.kafkaAnswered()
	var changed []string
	for _, g := range p.groups {
		st, read := p.states[g]
		if read && l.selected(g) && !l.kafka[g].same(st) {
			changed = append(changed, g)
		}
	}
	l.remark(changed)
}
