package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The stop: what is pending is flushed, and a group left not mirrored is an error naming it.

// flush syncs the groups with pending changes once more after ctx ended (SIGTERM), with a
// bounded context of its own, so a change seen just before the stop is not lost: those marked
// and those waiting for the retry of a failed write. A sync that finds a store moved marks its
// group to be decided anew, so the flush syncs again, a few times at most, while any is marked.
// A group still not mirrored after it (a read or write failed, or the flush ran out of time) is
// an error naming the groups: Kafka may be behind ZooKeeper there, and a clean exit would say
// otherwise. Writes to a topic or partition Kafka does not have (a legacy offset of a deleted
// topic) are left out once Kafka's metadata confirms it: no run can write them, and plan
// reports them.
func (l *loop) flush(ctx context.Context) error {
	// The watcher ends with ctx: wait for it, so a change it reports on its way out is part of
	// this flush rather than marked after its last pass and counted as not mirrored.
	l.stopWatch()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.m.FlushTimeout)
	defer cancel()
	l.remark(slices.Collect(maps.Keys(l.retryAt)))
	clear(l.retryAt)
	l.missing = map[string][]migrate.TopicPartition{}
	for range flushPasses {
		l.sync(fctx)
		if l.dirtyCount() == 0 || fctx.Err() != nil {
			break
		}
	}
	left := map[string]bool{}
	for g := range l.retryAt {
		left[g] = true
	}
	for g := range l.confirmedMissing(fctx) {
		delete(left, g)
	}
	l.mu.Lock()
	maps.Copy(left, l.dirty) // marked still: not synced to the end (a failed read, the timeout)
	l.mu.Unlock()
	if len(left) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(left))
	const shown = 10
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return fmt.Errorf("stopped with %d groups not mirrored (a write or read failed, or the flush ran out of time after %s): %s: "+
		"Kafka may be behind ZooKeeper for them; run dual-commit again, or verify", len(names), l.m.FlushTimeout, list)
}

// confirmedMissing returns the groups left with failed writes only to partitions that Kafka's
// metadata says do not exist. A failed read confirms none.
func (l *loop) confirmedMissing(ctx context.Context) map[string]bool {
	var topics []string
	for _, tps := range l.missing {
		for _, tp := range tps {
			topics = append(topics, tp.Topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	slices.Sort(topics)
	info, err := l.m.Kafka.Topics(ctx, slices.Compact(topics))
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for g, tps := range l.missing {
		there := slices.ContainsFunc(tps, func(tp migrate.TopicPartition) bool {
			t, ok := info[tp.Topic]
			_, has := t.Partitions[tp.Partition]
			return !ok || (t.Exists && has) // not described, or there after all
		})
		if !there {
			out[g] = true
		}
	}
	return out
}

// onlyMissing returns the partitions of the failed writes when every failure says Kafka has no
// such topic or partition.
func onlyMissing(ws []Write) ([]migrate.TopicPartition, bool) {
	var tps []migrate.TopicPartition
	for _, w := range ws {
		switch {
		case w.Err == nil:
		case errors.Is(w.Err, migrate.ErrPartitionMissing):
			tps = append(tps, w.TopicPartition)
		default:
			return nil, false
		}
	}
	return tps, len(tps) > 0
}

// flushPasses bounds the syncs of a flush: a group marked again by one (a store moved under it)
// is decided anew by the next.
const flushPasses = 3

func (l *loop) dirtyCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.dirty)
}
