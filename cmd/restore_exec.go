package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// restoreKafka backs up what the plan's writes overwrite, commits them group by group and reads
// every one back. Outcomes are per partition, in the plan; the error is for what stopped the run.
func restoreKafka(ctx context.Context, kafka kafkaStore, plan *archive.Plan, backupPath, fingerprint, version string) error {
	b, err := migrate.CreateBackup(backupPath, fingerprint, time.Now())
	if err != nil {
		settleRestore(plan, migrate.StatusFailed, "not written: the backup file could not be created")
		return fmt.Errorf("%w: nothing was written", err)
	}
	// Every record is on disk before the first commit: prepare everything, then write.
	var toBackUp []migrate.GroupResult
	for _, g := range plan.Groups {
		var recs []migrate.PartitionResult
		for _, it := range g.Items {
			if it.Status == migrate.StatusWouldWrite {
				recs = append(recs, migrate.PartitionResult{Topic: it.Topic, Partition: it.Partition, Target: *it.Offset, Before: it.Current})
			}
		}
		if len(recs) > 0 {
			toBackUp = append(toBackUp, migrate.GroupResult{Group: g.Group, Partitions: recs})
		}
	}
	if err := b.Record(ctx, toBackUp); err != nil {
		settleRestore(plan, migrate.StatusFailed, "not written: the backup failed")
		return errors.Join(fmt.Errorf("backup: %w: nothing was written", err), b.Close())
	}
	if err := b.Close(); err != nil {
		settleRestore(plan, migrate.StatusFailed, "not written: the backup failed")
		return fmt.Errorf("close backup file %s: %w: nothing was written", backupPath, err)
	}
	groups := forWrites(plan, func(g *archive.Group) {
		var commits []migrate.Commit
		for _, it := range g.Items {
			if it.Status == migrate.StatusWouldWrite {
				commits = append(commits, migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: it.Topic, Partition: it.Partition},
					Offset: *it.Offset, Metadata: restoreMetadata(version, plan, it)})
			}
		}
		errs, err := kafka.Commit(ctx, g.Group, commits)
		applyRestoreCommit(g, errs, err)
	})
	states, err := kafka.Groups(ctx, groups)
	if err != nil {
		settleRestore(plan, migrate.StatusFailed, "committed, but the read-back failed")
		return fmt.Errorf("read back the restored offsets: %w", err)
	}
	for i := range plan.Groups {
		g := &plan.Groups[i]
		readBack(g, func(tp migrate.TopicPartition) (int64, bool) {
			v, ok := states[g.Group].Committed[tp]
			return v, ok
		})
	}
	return ctx.Err()
}

// applyRestoreCommit keeps each partition's commit error; a committed partition stays
// would-write until its read-back.
func applyRestoreCommit(g *archive.Group, errs []migrate.CommitError, err error) {
	byTP := map[migrate.TopicPartition]error{}
	answered := map[migrate.TopicPartition]bool{}
	for _, ce := range errs {
		byTP[ce.TopicPartition], answered[ce.TopicPartition] = ce.Err, true
	}
	for j := range g.Items {
		it := &g.Items[j]
		if it.Status != migrate.StatusWouldWrite {
			continue
		}
		tp := migrate.TopicPartition{Topic: it.Topic, Partition: it.Partition}
		switch {
		case err != nil:
			it.Status, it.Reason = migrate.StatusFailed, "commit failed: "+err.Error()
		case !answered[tp]:
			it.Status, it.Reason = migrate.StatusFailed, "the commit answered nothing for this partition"
		case byTP[tp] != nil:
			it.Status, it.Reason = migrate.StatusFailed, "commit failed: "+byTP[tp].Error()
		}
	}
}

// readBack settles every partition still would-write: written when the store now holds the
// offset, failed otherwise.
func readBack(g *archive.Group, get func(migrate.TopicPartition) (int64, bool)) {
	for j := range g.Items {
		it := &g.Items[j]
		if it.Status != migrate.StatusWouldWrite {
			continue
		}
		v, ok := get(migrate.TopicPartition{Topic: it.Topic, Partition: it.Partition})
		switch {
		case !ok:
			it.Status, it.Reason = migrate.StatusFailed, "read back: nothing there"
		case v != *it.Offset:
			it.ReadBack = &v
			it.Status, it.Reason = migrate.StatusFailed, fmt.Sprintf("read back %d, expected %d", v, *it.Offset)
		default:
			it.ReadBack = &v
			it.Status = migrate.StatusWritten
		}
	}
}

func settleRestore(plan *archive.Plan, to migrate.PartitionStatus, reason string) {
	for i := range plan.Groups {
		for j := range plan.Groups[i].Items {
			if it := &plan.Groups[i].Items[j]; it.Status == migrate.StatusWouldWrite {
				it.Status, it.Reason = to, reason
			}
		}
	}
}

// restoreZK saves the znodes about to be overwritten as an export document, then writes each
// group's offsets and reads them all back.
func restoreZK(ctx context.Context, legacy migrate.LegacyStore, w legacyWriter, plan *archive.Plan, backupPath string) error {
	old := archive.Export{SchemaVersion: archive.SchemaVersion, Source: archive.SourceZK, ExportedAt: time.Now().UTC(), Offsets: []archive.Offset{}}
	for _, g := range plan.Groups {
		for _, it := range g.Items {
			switch {
			case it.Status != migrate.StatusWouldWrite:
			case it.CurrentInvalid != "":
				old.Invalid = append(old.Invalid, archive.Invalid{Group: g.Group, Topic: it.Topic, Partition: it.Partition, Znode: it.CurrentZnode, Reason: it.CurrentInvalid})
			case it.Current != nil:
				mtime := it.CurrentMtime.UTC()
				old.Offsets = append(old.Offsets, archive.Offset{Group: g.Group, Topic: it.Topic, Partition: it.Partition,
					Offset: *it.Current, Znode: it.CurrentZnode, Mtime: &mtime})
			}
		}
	}
	if err := archive.CreateFile(backupPath, func(f io.Writer) error { return archive.WriteJSON(f, old) }); err != nil {
		settleRestore(plan, migrate.StatusFailed, "not written: the backup file could not be created")
		return fmt.Errorf("backup of the ZooKeeper offsets: %w: nothing was written", err)
	}
	var (
		mu    sync.Mutex
		werrs []string
	)
	groups := forWrites(plan, func(g *archive.Group) {
		offsets := map[migrate.TopicPartition]int64{}
		for _, it := range g.Items {
			if it.Status == migrate.StatusWouldWrite {
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
	now, err := readExistingLegacy(ctx, legacy, groups)
	if err != nil {
		settleRestore(plan, migrate.StatusFailed, "written, but the read-back failed")
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

// restoreParallel bounds the groups written at once, as copy's --parallel default.
const restoreParallel = migrate.DefaultParallel

// forWrites calls write for every group with a partition to write, restoreParallel at a time
// (each call owns its group's items), and returns those groups' names in plan order.
func forWrites(plan *archive.Plan, write func(*archive.Group)) []string {
	var (
		groups []string
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, restoreParallel)
	for i := range plan.Groups {
		g := &plan.Groups[i]
		if !slices.ContainsFunc(g.Items, func(it archive.Item) bool { return it.Status == migrate.StatusWouldWrite }) {
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

// restoreMetadata is the commit metadata of a restored offset: the provenance of a ZooKeeper
// export's znode, or that of a restore.
func restoreMetadata(version string, plan *archive.Plan, it archive.Item) string {
	if plan.Source == archive.SourceZK && plan.Format == archive.FormatJSON {
		return migrate.Provenance{Version: version, Mtime: it.Mtime}.String()
	}
	v := version
	if len(v) > 200 {
		v = strings.ToValidUTF8(v[:200], "")
	}
	return fmt.Sprintf("zk2kafka %s restore from a %s file", v, plan.Format)
}
