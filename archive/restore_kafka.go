package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// restoreBatchGroups is how many groups a restore re-checks and commits together, as copy's
// --batch-groups default.
const restoreBatchGroups = 128

// restoreKafka executes the plan's writes with copy's executor: the plan's writes become a
// migrate plan whose targets are the file's offsets, and each batch is decided again, just
// before it is committed, by the restore's own rules (PlanRestore) over a fresh read of the
// gates and of Kafka. Outcomes go back into plan, per partition; the error is what stopped the
// run.
func restoreKafka(ctx context.Context, req RestoreRequest, file File, adjust int64, plan *Plan, fingerprint string) error {
	b, err := copier.CreateBackup(req.Backup, fingerprint, time.Now())
	if err != nil {
		settle(plan, copier.StatusFailed, "not written: the backup file could not be created")
		return fmt.Errorf("%w: nothing was written", err)
	}
	groups, items := restoreWrites(plan)
	writes := map[migrate.Key]Entry{}
	for _, e := range file.Entries {
		if _, ok := items[e.Key]; ok {
			writes[e.Key] = e
		}
	}
	executor := &copier.Copier{
		Legacy: req.Legacy, Kafka: req.Kafka, Committer: req.Kafka, Backup: b,
		Metadata: func(_ string, e migrate.Entry) string {
			return restoreMetadata(req.Version, plan.Source, plan.Format, e.Mtime, adjust)
		},
		BatchGroups: restoreBatchGroups,
		Replan:      replanner(file.Format, file.Source, writes, Options{Force: req.Force}),
	}
	// The filter carries the group map: the executor reads and commits each group's Kafka
	// group through it, and its backup names the Kafka groups.
	head := migrate.Plan{SchemaVersion: migrate.PlanSchemaVersion, CreatedAt: time.Now().UTC(),
		Policy: migrate.Policy{OnConflict: migrate.ConflictZK, OutOfRange: migrate.RangeFail},
		Filter: migrate.Filter{GroupMap: req.Filter.GroupMap}.Spec()}
	whole := func(yield func([]migrate.GroupPlan, error) bool) { yield(groups, nil) }
	runErr := executor.Stream(ctx, head, whole, len(groups), true, func(g copier.GroupResult) error {
		for _, p := range g.Partitions {
			it := items[migrate.Key{Group: g.Group, Topic: p.Topic, Partition: p.Partition}]
			if it == nil {
				continue
			}
			it.Status, it.ReadBack, it.Current = p.Status, p.ReadBack, p.Before
			if p.Reason != "" {
				it.Reason = p.Reason
			}
		}
		return nil
	})
	if runErr != nil {
		settle(plan, copier.StatusFailed, "not written: the restore stopped before this partition's batch")
	}
	if err := b.Close(); err != nil {
		return errors.Join(runErr, fmt.Errorf("close backup file %s: %w", req.Backup, err))
	}
	return runErr
}

// restoreWrites turns the plan's would-write items into the groups of a migrate plan, in plan
// order, and indexes the items by key.
func restoreWrites(plan *Plan) ([]migrate.GroupPlan, map[migrate.Key]*Item) {
	var groups []migrate.GroupPlan
	items := map[migrate.Key]*Item{}
	for i := range plan.Groups {
		g := &plan.Groups[i]
		gp := kafkaGroupPlan(*g)
		var writes []migrate.Entry
		for _, e := range gp.Entries {
			if e.Action == migrate.ActionWrite {
				writes = append(writes, e)
			}
		}
		if len(writes) == 0 {
			continue
		}
		gp.Entries = writes
		groups = append(groups, gp)
		for j := range g.Items {
			if it := &g.Items[j]; it.Status == copier.StatusWouldWrite {
				items[migrate.Key{Group: g.Group, Topic: it.Topic, Partition: it.Partition}] = it
			}
		}
	}
	return groups, items
}

// kafkaGroupPlan expresses one group of a restore to Kafka as a group of a migrate plan: a
// would-write item is a write of the file's offset, one already holding it a skip, anything
// else a block with the restore's reason.
func kafkaGroupPlan(g Group) migrate.GroupPlan {
	gp := migrate.GroupPlan{Group: g.Group, KafkaState: g.KafkaState, KafkaMembers: g.KafkaMembers,
		LiveConsumers: g.LiveConsumers, Gates: g.Gates, Entries: make([]migrate.Entry, 0, len(g.Items))}
	for _, it := range g.Items {
		e := migrate.Entry{Topic: it.Topic, Partition: it.Partition, Kafka: it.Current, Reason: it.Reason, Mtime: it.Mtime}
		if it.Offset != nil {
			e.Target = *it.Offset
		}
		switch it.Status {
		case copier.StatusWouldWrite:
			e.Action = migrate.ActionWrite
		case copier.StatusAlready:
			e.Action = migrate.ActionSkip
		default:
			e.Action = migrate.ActionBlock
		}
		gp.Entries = append(gp.Entries, e)
	}
	return gp
}

// replanner decides a batch of a restore to Kafka again, by PlanRestore, from the re-check's
// fresh read: the groups' liveness, Kafka state and commits, and their topics. Only the
// partitions planned as writes are decided: those are the ones the batch may commit.
func replanner(format Format, source Source, writes map[migrate.Key]Entry, opts Options) copier.Replanner {
	return func(in migrate.Inputs) (map[string]migrate.GroupPlan, error) {
		sub := File{Format: format, Source: source}
		st := State{Groups: make(map[string]Current, len(in.Legacy)), Topics: in.Topics}
		for _, lg := range in.Legacy {
			ks, ok := in.Groups[lg.Group]
			if !ok {
				return nil, fmt.Errorf("group %q: no Kafka group state read", lg.Group)
			}
			st.Groups[lg.Group] = Current{LiveConsumers: lg.LiveConsumers, Kafka: ks}
		}
		for k, e := range writes {
			if _, ok := st.Groups[k.Group]; ok {
				sub.Entries = append(sub.Entries, e)
			}
		}
		p, err := PlanRestore(sub, TargetKafka, st, opts)
		if err != nil {
			return nil, err
		}
		out := make(map[string]migrate.GroupPlan, len(p.Groups))
		for _, g := range p.Groups {
			out[g.Group] = kafkaGroupPlan(g)
		}
		return out, nil
	}
}

// restoreMetadata is the commit metadata of a restored offset: the provenance of a ZooKeeper
// export's znode, or that of a restore.
func restoreMetadata(version string, source Source, format Format, mtime time.Time, adjust int64) string {
	if source == SourceZK && format == FormatJSON {
		return migrate.Provenance{Version: version, Mtime: mtime, Adjust: adjust}.String()
	}
	v := version
	if len(v) > 200 {
		v = strings.ToValidUTF8(v[:200], "")
	}
	return fmt.Sprintf("zk2kafka %s restore from a %s file", v, format)
}
