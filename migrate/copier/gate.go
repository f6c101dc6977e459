package copier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// gateBatch reads the batch's gates again just before its commits: the Kafka group state and
// commits (one Groups call) and the legacy liveness registrations, then applies them (applyGate).
func (c *Copier) gateBatch(ctx context.Context, results []GroupResult, commits [][]migrate.Commit) error {
	names := gatedNames(results, commits)
	var states map[string]migrate.GroupState
	var live map[string][]string
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() { states, errs[0] = c.Kafka.Groups(ctx, names) })
	wg.Go(func() { live, errs[1] = c.liveness(ctx, names) })
	wg.Wait()
	if errs[0] != nil {
		errs[0] = fmt.Errorf("read %d groups from kafka: %w", len(names), errs[0])
	}
	if errs[1] != nil {
		errs[1] = fmt.Errorf("read the liveness of %d legacy groups: %w", len(names), errs[1])
	}
	if err := errors.Join(errs[:]...); err != nil {
		return fmt.Errorf("re-check just before the commit: %w", err)
	}
	return applyGate(results, commits, states, live)
}

// gatedNames lists the groups of a batch that have commits to make: the ones its gate reads.
func gatedNames(results []GroupResult, commits [][]migrate.Commit) []string {
	var names []string
	for i := range results {
		if len(commits[i]) > 0 {
			names = append(names, results[i].Group)
		}
	}
	return names
}

// applyGate blocks every pending partition whose group is now live or active, or whose Kafka
// commit is no longer the Before the decision and the backup saw, and drops its commit. Every
// group with commits must have an answer in states, else nothing is changed. A blocked
// partition's record stays in the backup, which is harmless: restore puts a record back only
// where Kafka holds its Target, so an uncommitted one is refused there as moved since the copy.
func applyGate(results []GroupResult, commits [][]migrate.Commit, states map[string]migrate.GroupState, live map[string][]string) error {
	for _, g := range gatedNames(results, commits) {
		if _, ok := states[g]; !ok {
			return fmt.Errorf("re-check just before the commit: read group %q from kafka: no answer for it", g)
		}
	}
	for i := range results {
		if len(commits[i]) == 0 {
			continue
		}
		g := results[i].Group
		kg := g // the Kafka group, named in the reasons about Kafka
		if results[i].KafkaGroup != "" {
			kg = results[i].KafkaGroup
		}
		st := states[g]
		blocked := map[migrate.TopicPartition]bool{}
		for j := range results[i].Partitions {
			p := &results[i].Partitions[j]
			if p.Status != statusPending {
				continue
			}
			now, has := st.Committed[migrate.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
			var reason string
			switch {
			case len(live[g]) > 0:
				reason = fmt.Sprintf("changed just before the commit: legacy consumers registered in group %q: %v", g, live[g])
			case st.Active():
				reason = fmt.Sprintf("changed just before the commit: Kafka group %q is %s with %d members", kg, st.State, st.Members)
			case has != (p.Before != nil) || has && now != *p.Before:
				reason = fmt.Sprintf("changed just before the commit: Kafka's commit of %s/%s/%d is now %s, was %s",
					kg, p.Topic, p.Partition, offsetString(has, now), offsetString(p.Before != nil, deref(p.Before)))
			default:
				continue
			}
			p.Status, p.Reason = StatusBlocked, reason
			blocked[migrate.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
		}
		commits[i] = slices.DeleteFunc(commits[i], func(cm migrate.Commit) bool { return blocked[cm.TopicPartition] })
	}
	return nil
}

// liveness returns the live legacy consumer registrations of each group: by the re-check
// without offsets when the store offers it, else by reading the groups whole.
func (c *Copier) liveness(ctx context.Context, groups []string) (map[string][]string, error) {
	out := make(map[string][]string, len(groups))
	if rc, ok := c.Legacy.(migrate.LegacyRechecker); ok {
		reqs := make([]migrate.RecheckRequest, len(groups))
		for i, g := range groups {
			reqs[i].Group = g
		}
		gs, err := rc.RecheckGroups(ctx, reqs)
		if err != nil {
			return nil, err
		}
		if len(gs) != len(groups) {
			return nil, fmt.Errorf("the store returned %d groups for %d", len(gs), len(groups))
		}
		for i, g := range gs {
			if g.Group != groups[i] {
				return nil, fmt.Errorf("legacy group %q: the store returned %q in its place", groups[i], g.Group)
			}
			out[g.Group] = g.LiveConsumers
		}
		return out, nil
	}
	err := c.Legacy.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
		out[g.Group] = g.LiveConsumers
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if _, ok := out[g]; !ok {
			return nil, fmt.Errorf("legacy group %q: the store returned nothing for it", g)
		}
	}
	return out, nil
}

func offsetString(ok bool, v int64) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(v)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// readBack fetches the batch's committed offsets and marks each committed partition written
// only when Kafka returns exactly the target.
func (c *Copier) readBack(ctx context.Context, results []GroupResult) error {
	states, err := c.Kafka.Groups(ctx, groupNamesOf(results))
	if err != nil {
		return fmt.Errorf("read back the batch's commits: %w", err)
	}
	applyReadBack(results, states)
	return nil
}

// applyReadBack marks each committed partition of results, and each whose commit was in flight
// at a stop, written when states holds exactly its target, failed otherwise.
func applyReadBack(results []GroupResult, states map[string]migrate.GroupState) {
	for i := range results {
		st := states[results[i].Group]
		for j := range results[i].Partitions {
			p := &results[i].Partitions[j]
			if p.Status != statusCommitted && p.Status != statusInFlight {
				continue
			}
			got, ok := st.Committed[migrate.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
			switch {
			case p.Status == statusInFlight && (!ok || got != p.Target):
				what := "no commit"
				if ok {
					p.ReadBack = &got
					what = fmt.Sprintf("%d", got)
				}
				p.Status, p.Reason = StatusFailed, fmt.Sprintf("%s; read back: Kafka holds %s, not %d (a commit still on its way may land later: run verify)",
					inFlightReason, what, p.Target)
			case !ok:
				p.Status, p.Reason = StatusFailed, "read back: Kafka has no commit"
			case got != p.Target:
				p.ReadBack = &got
				p.Status, p.Reason = StatusFailed, fmt.Sprintf("read back %d, expected %d", got, p.Target)
			default:
				p.ReadBack = &got
				p.Status = StatusWritten
			}
		}
	}
}

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
		states map[string]migrate.GroupState
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
		next.gated, next.gatedAt = true, c.now()
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
