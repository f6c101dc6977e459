package archive

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// restoreZK saves the znodes about to be overwritten as an export document, then writes each
// group's offsets and reads them all back. It stays apart from copy's executor: ZooKeeper has
// no admin commit to gate (--force overrides live consumers), its backup is an export document,
// and the writes are znode sets, not Kafka commits.
func restoreZK(ctx context.Context, legacy migrate.LegacyStore, w migrate.LegacyWriter, plan *Plan, backupPath string) error {
	old := Document{SchemaVersion: SchemaVersion, Source: SourceZK, ExportedAt: time.Now().UTC(), Offsets: []Offset{}}
	for _, g := range plan.Groups {
		for _, it := range g.Items {
			switch {
			case it.Status != copier.StatusWouldWrite:
			case it.CurrentInvalid != "":
				old.Invalid = append(old.Invalid, Invalid{Group: g.Group, Topic: it.Topic, Partition: it.Partition, Znode: it.CurrentZnode, Reason: it.CurrentInvalid})
			case it.Current != nil:
				mtime := it.CurrentMtime.UTC()
				old.Offsets = append(old.Offsets, Offset{Group: g.Group, Topic: it.Topic, Partition: it.Partition,
					Offset: *it.Current, Znode: it.CurrentZnode, Mtime: &mtime})
			}
		}
	}
	if err := CreateFile(backupPath, func(f io.Writer) error { return WriteJSON(f, old) }); err != nil {
		settle(plan, copier.StatusFailed, "not written: the backup file could not be created")
		return fmt.Errorf("backup of the ZooKeeper offsets: %w: nothing was written", err)
	}
	var (
		mu    sync.Mutex
		werrs []string
	)
	groups := forWrites(plan, func(g *Group) {
		offsets := map[migrate.TopicPartition]int64{}
		for _, it := range g.Items {
			if it.Status == copier.StatusWouldWrite {
				offsets[migrate.TopicPartition{Topic: it.Topic, Partition: it.Partition}] = *it.Offset
			}
		}
		// A failed call may have written some znodes: the read-back below tells which.
		if err := w.WriteOffsets(ctx, g.Group, offsets); err != nil {
			mu.Lock()
			werrs = append(werrs, err.Error())
			mu.Unlock()
		}
	})
	now, err := readExisting(ctx, legacy, groups)
	if err != nil {
		settle(plan, copier.StatusFailed, "written, but the read-back failed")
		return fmt.Errorf("read back the restored offsets: %w", err)
	}
	for i := range plan.Groups {
		g := &plan.Groups[i]
		readBack(g, func(tp migrate.TopicPartition) (int64, bool) {
			for _, o := range now[g.Group].Offsets {
				if o.Topic == tp.Topic && o.Partition == tp.Partition && o.Invalid == "" {
					return o.Offset, true
				}
			}
			return 0, false
		})
	}
	if len(werrs) > 0 {
		return fmt.Errorf("write to zookeeper: %s", strings.Join(werrs, "; "))
	}
	return ctx.Err()
}

// readBack settles every partition still would-write: written when the store now holds the
// offset, failed otherwise.
func readBack(g *Group, get func(migrate.TopicPartition) (int64, bool)) {
	for j := range g.Items {
		it := &g.Items[j]
		if it.Status != copier.StatusWouldWrite {
			continue
		}
		v, ok := get(migrate.TopicPartition{Topic: it.Topic, Partition: it.Partition})
		switch {
		case !ok:
			it.Status, it.Reason = copier.StatusFailed, "read back: nothing there"
		case v != *it.Offset:
			it.ReadBack = &v
			it.Status, it.Reason = copier.StatusFailed, fmt.Sprintf("read back %d, expected %d", v, *it.Offset)
		default:
			it.ReadBack = &v
			it.Status = copier.StatusWritten
		}
	}
}

// restoreParallel bounds the groups written at once, as copy's --parallel default.
const restoreParallel = copier.DefaultParallel

// forWrites calls write for every group with a partition to write, restoreParallel at a time
// (each call owns its group's items), and returns those groups' names in plan order.
func forWrites(plan *Plan, write func(*Group)) []string {
	var (
		groups []string
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, restoreParallel)
	for i := range plan.Groups {
		g := &plan.Groups[i]
		if !slices.ContainsFunc(g.Items, func(it Item) bool { return it.Status == copier.StatusWouldWrite }) {
			continue
		}
		groups = append(groups, g.Group)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			write(g)
		})
	}
	wg.Wait()
	return groups
}
