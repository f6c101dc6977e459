package migrate

import (
	"context"
	"sync"
)

// readBackGating reads back the batch just committed and, in the same Kafka read, gates the
// batch after it. A batch's gate must be read after its re-check and just before its commit;
// the read-back of the batch before it is both (the next batch was prepared during this one's
// commit, and its commits follow this read-back at once), so one Groups call serves both and
// the next batch's liveness is read beside it instead of after it. That takes one Kafka round
// (DescribeGroups + OffsetFetch) and one ZooKeeper round off each batch's path.
//
// It waits for the next batch to be prepared first: the writer would wait for it right after
// anyway, and then read its gate. The next batch is gated here only when everything it needs
// was answered (its groups' Kafka state and commits, its liveness); otherwise writeBatch gates
// it as before, so a failure here costs a read, never a check. readCtx bounds the read-back of
// commits already sent; ctx is the run's: once it ended, the next batch is not gated (nor
// committed: Run stops at the batch boundary).
func (c *Copier) readBackGating(ctx, readCtx context.Context, results []GroupResult, ahead *lookahead) error {
	next := ahead.takeEarly(ctx)
	if next == nil || next.gated {
		return c.readBack(readCtx, results)
	}
	names := gatedNames(next.results, next.commits)
	if len(names) == 0 {
		return c.readBack(readCtx, results)
	}
	var (
		states map[string]GroupState
		live   map[string][]string
		errs   [2]error
		wg     sync.WaitGroup
	)
	wg.Go(func() { states, errs[0] = c.Kafka.Groups(readCtx, append(groupNamesOf(results), names...)) })
	wg.Go(func() { live, errs[1] = c.liveness(ctx, names) })
	wg.Wait()
	if errs[0] != nil {
		// The next batch's groups may be what failed the read: read this batch back alone,
		// and leave the next one to its own gate, which reports its error.
		return c.readBack(readCtx, results)
	}
	applyReadBack(results, states)
	if errs[1] == nil && applyGate(next.results, next.commits, states, live) == nil {
		next.gated = true
	}
	return nil
}

// groupNamesOf lists the groups of a batch's results.
func groupNamesOf(results []GroupResult) []string {
	names := make([]string, len(results))
	for i, g := range results {
		names[i] = g.Group
	}
	return names
}
