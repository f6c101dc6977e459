package mirror

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// readBatch reads a batch of groups from ZooKeeper and returns them with the groups it could
// read. A failed batch read is retried one group at a time, so one unreadable group does not
// hold back the others; the groups that still fail are marked for the next poll and reported
// together, once, so a ZooKeeper outage does not log one failure per group.
func (l *loop) readBatch(ctx context.Context, batch []string) (map[string]migrate.LegacyGroup, []string) {
	legacy, err := l.readLegacy(ctx, batch)
	if err == nil {
		return legacy, batch
	}
	if len(batch) == 1 || ctx.Err() != nil {
		l.syncFailed(batch, fmt.Errorf("read %d legacy groups: %w", len(batch), err))
		l.remark(batch)
		return nil, nil
	}
	legacy = make(map[string]migrate.LegacyGroup, len(batch))
	var read, failed []string
	var first error
	for _, g := range batch {
		one, err := l.readLegacy(ctx, []string{g})
		if err != nil {
			failed = append(failed, g)
			first = cmp.Or(first, fmt.Errorf("read legacy group %q: %w", g, err))
			continue
		}
		legacy[g] = one[g]
		read = append(read, g)
	}
	if len(failed) > 0 {
		if len(failed) > 1 {
			first = fmt.Errorf("%w (and %d more groups of the batch)", first, len(failed)-1)
		}
		l.syncFailed(failed, first)
		l.remark(failed)
	}
	return legacy, read
}

// readLegacy reads groups whole; an error means nothing of the read can be trusted.
func (l *loop) readLegacy(ctx context.Context, groups []string) (map[string]migrate.LegacyGroup, error) {
	legacy := make(map[string]migrate.LegacyGroup, len(groups))
	var mu sync.Mutex // ReadGroups may emit from several goroutines
	err := l.m.Legacy.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
		mu.Lock()
		defer mu.Unlock()
		legacy[g.Group] = g
		return nil
	})
	return legacy, err
}
