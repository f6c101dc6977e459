package copier

import (
	"context"
	"fmt"
	"iter"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Stream re-reads the stores for each batch of groups just before writing them, so that the gates
// (live legacy consumers, an active Kafka group), the ZooKeeper offsets being copied and the
// current Kafka offsets are checked again: a planned write is committed only when a fresh plan
// still says write with the same target. Every Kafka offset about to be overwritten is backed up
// before its batch is committed, and each commit is read back. Without execute nothing is
// written. Errors of single partitions are in the result; the error return is for a failure
// that stopped the run (context cancelled, a store down, the backup failing).
//
// The next batch is re-checked, decided and backed up while the current one is committed and
// read back: the batches hold different groups, and the two halves take similar time. It runs
// at most one batch ahead, and just before a batch is committed its gates (liveness, the Kafka
// group state and commits) are read once more, so what changed during the previous batch's
// commits still blocks. A cancelled run stops at a batch boundary: nothing is committed after
// the batch in progress.
// The backup may then hold the next batch's records without their commits: restoring them puts
// back the offsets Kafka still holds, which changes nothing.
//
// The plan is never whole in memory: head carries the plan's policy,
// filter, creation time and retention (its Groups are ignored), groups yields the plan's groups
// in order a slice at a time, and each group's result goes to sink, in plan order, once its
// batch is done (a failed batch's results too, before the error). total is the number of
// groups with writes, for the messages (0: unknown). An error from groups stops the copy as a
// failed store read does: the batches before it are written, nothing after.
func (c *Copier) Stream(ctx context.Context, head migrate.Plan, groups iter.Seq2[[]migrate.GroupPlan, error], total int, execute bool, sink func(GroupResult) error) error {
	if execute && c.Backup == nil {
		return fmt.Errorf("copy: no backup configured: refusing to write")
	}
	// The plan's group map: each legacy group's state is read from, and its offsets committed
	// into, the Kafka group it lands in; liveness stays the legacy group's.
	gm, err := head.Filter.Map()
	if err != nil {
		return fmt.Errorf("copy: plan filter: %w", err)
	}
	mapped := *c
	mapped.gmap, mapped.Kafka, mapped.Committer = gm, migrate.MapKafka(c.Kafka, gm), migrate.MapCommitter(c.Committer, gm)
	c = &mapped
	batch := max(c.BatchGroups, 1)
	if c.BatchGroups == 0 {
		batch = 32
	}
	ahead := c.prepareAhead(ctx, head, writeBatches(groups, batch), execute)
	defer ahead.stop()
	done, groupsDone := 0, 0
	stopped := func(err error) error {
		if total > 0 {
			return fmt.Errorf("copy stopped after %d of %d groups: %w", groupsDone, total, err)
		}
		return fmt.Errorf("copy stopped after %d groups: %w", groupsDone, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			// Stopped after a batch: it ends the copy unless that batch was the last one.
			if ahead.exhausted() {
				return nil
			}
			return stopped(err)
		}
		pb, ok := ahead.next()
		if !ok {
			if ahead.complete {
				return nil
			}
			return stopped(context.Cause(ctx))
		}
		if err := ctx.Err(); err != nil {
			// Stopped while this batch was prepared: it is backed up but not committed, and a
			// commit now would be one batch past the stop.
			return stopped(err)
		}
		err := pb.err
		if err == nil && execute {
			err = c.writeBatch(ctx, pb, ahead)
		}
		for _, g := range pb.results {
			if serr := sink(g); serr != nil && err == nil {
				err = serr
			}
			done += len(g.Partitions)
		}
		groupsDone += len(pb.chunk)
		if c.Progress != nil && pb.results != nil {
			c.Progress(done)
		}
		if err != nil {
			return err
		}
	}
}

// writeBatches turns a stream of plan groups into batches of size groups with writes, the
// same batches as chunking the whole plan's Writes would give.
func writeBatches(groups iter.Seq2[[]migrate.GroupPlan, error], size int) iter.Seq2[[]migrate.GroupWrites, error] {
	return func(yield func([]migrate.GroupWrites, error) bool) {
		var cur []migrate.GroupWrites
		for gs, err := range groups {
			if err != nil {
				yield(nil, err) // the partial batch is dropped: nothing after the error
				return
			}
			for _, w := range (migrate.Plan{Groups: gs}).Writes() {
				if cur = append(cur, w); len(cur) == size {
					if !yield(cur, nil) {
						return
					}
					cur = nil
				}
			}
		}
		if len(cur) > 0 {
			yield(cur, nil)
		}
	}
}
