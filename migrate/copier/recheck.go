package copier

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// prepared is one batch made ready ahead of the writer: re-checked, decided and, when
// executing, backed up. results is nil when the re-check failed. gated says the gate just
// before the commit was already read and applied, folded into the previous batch's read-back
// (see readBackGating).
type prepared struct {
	chunk   []migrate.GroupWrites
	results []GroupResult
	commits [][]migrate.Commit
	err     error
	gated   bool
	gatedAt time.Time // when the early gate was read (gated)
}

// lookahead prepares the batches in order, one ahead of the writer: results is unbuffered, so
// batch k+1 is decided and backed up while batch k is written, and k+2 only once k+1 was
// taken (k+2's re-check may already run then; see prepareAhead).
// The writer may take batch k+1 early, while it still finishes batch k (takeEarly); next then
// hands out that same batch. Both run on the writer's goroutine only.
type lookahead struct {
	results chan *prepared
	cancel  context.CancelFunc
	done    chan struct{}
	// complete is set, before results is closed, when every batch was handed over.
	complete bool

	early   *prepared // taken by takeEarly, not yet handed out by next
	hasNext bool      // early holds the next batch (nil: the look-ahead had stopped)
}

// next returns the next batch to write; false when the look-ahead stopped.
func (la *lookahead) next() (*prepared, bool) {
	pb := la.peek()
	la.early, la.hasNext = nil, false
	return pb, pb != nil
}

// peek receives the batch after the one being written into early, once, and returns it (nil:
// the look-ahead had stopped).
func (la *lookahead) peek() *prepared {
	if !la.hasNext {
		la.early, la.hasNext = <-la.results, true
	}
	return la.early
}

// exhausted reports, once the run was stopped, whether every batch had already been handed
// out: the stop then came after the last batch, and the copy is complete. It may take a batch
// that is then never written.
func (la *lookahead) exhausted() bool { return la.peek() == nil && la.complete }

// takeEarly waits for the batch after the one being written and keeps it for next. It returns
// nil when there is none, it failed, or ctx ended (the run stops at the batch boundary then).
func (la *lookahead) takeEarly(ctx context.Context) *prepared {
	if ctx.Err() != nil {
		return nil
	}
	if pb := la.peek(); pb != nil && pb.err == nil && ctx.Err() == nil {
		return pb
	}
	return nil
}

// prepareAhead takes the batches from chunks as it goes (a streamed plan yields them as it is
// read); an error from chunks is handed over as a batch that failed.
func (c *Copier) prepareAhead(ctx context.Context, plan migrate.Plan, chunks iter.Seq2[[]migrate.GroupWrites, error], execute bool) *lookahead {
	ctx, cancel := context.WithCancel(ctx)
	la := &lookahead{results: make(chan *prepared), cancel: cancel, done: make(chan struct{})}
	// Two stages, so that a batch's reads overlap the batch before's decision and backup (CPU
	// and an fsync) as well as the commits of the one before that: re-check and decide+backup
	// take similar times, and together longer than the writer, which one stage would starve.
	// The re-check may thus run two batches ahead of the writer; the gate just before each
	// commit still reads what changed since.
	type rechecked struct {
		chunk []migrate.GroupWrites
		fresh map[string]migrate.GroupPlan
		err   error
	}
	fresh := make(chan rechecked)
	allRead := false // set by the first stage before it closes fresh: every chunk went through
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(fresh)
		for chunk, err := range chunks {
			r := rechecked{chunk: chunk, err: err}
			if err == nil {
				r.fresh, r.err = c.recheck(ctx, plan, chunk)
			}
			select {
			case fresh <- r:
			case <-ctx.Done():
				return
			}
			if r.err != nil {
				return
			}
		}
		allRead = true
	})
	wg.Go(func() {
		defer close(la.results)
		for r := range fresh {
			pb := &prepared{chunk: r.chunk, err: r.err}
			if r.err == nil {
				pb.results, pb.commits, pb.err = c.decideBatch(ctx, r.chunk, r.fresh, execute)
			}
			select {
			case la.results <- pb:
			case <-ctx.Done():
				return
			}
			if pb.err != nil {
				return
			}
		}
		la.complete = allRead // fresh is closed: its writes happened before
	})
	go func() {
		wg.Wait()
		close(la.done)
	}()
	return la
}

// stop ends the look-ahead and waits for it, so no store call outlives Run.
func (la *lookahead) stop() {
	la.cancel()
	<-la.done
}

// recheck plans the batch's groups afresh with the plan's policy. With a LegacyRechecker it
// reads only what the batch's decision depends on: liveness and the planned znodes from
// ZooKeeper, the batch's topics and groups from Kafka, all at once. Otherwise it re-reads the
// groups whole with the plan's topic selection.
func (c *Copier) recheck(ctx context.Context, plan migrate.Plan, chunk []migrate.GroupWrites) (map[string]migrate.GroupPlan, error) {
	var in migrate.Inputs
	var err error
	rc, ok := c.Legacy.(migrate.LegacyRechecker)
	switch {
	case ok:
		in, err = c.recheckInputs(ctx, rc, plan, chunk)
	case c.GatesOnly || c.Replan != nil:
		err = errors.New("the legacy store cannot re-check liveness alone")
	default:
		in, err = c.rereadInputs(ctx, plan, chunk)
	}
	if err != nil {
		return nil, fmt.Errorf("re-check before writing: %w", err)
	}
	if c.Replan != nil {
		out, err := c.Replan(in)
		if err != nil {
			return nil, fmt.Errorf("re-check before writing: %w", err)
		}
		return out, nil
	}
	p, err := migrate.Build(in, plan.Policy, plan.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("re-check before writing: %w", err)
	}
	out := make(map[string]migrate.GroupPlan, len(p.Groups))
	for _, g := range p.Groups {
		out[g.Group] = g
	}
	return out, nil
}

// rereadInputs reads the batch's groups whole, as plan does.
func (c *Copier) rereadInputs(ctx context.Context, plan migrate.Plan, chunk []migrate.GroupWrites) (migrate.Inputs, error) {
	spec := plan.Filter
	spec.Groups, spec.GroupRegex, spec.ExcludeGroupRegex = groupNames(chunk), "", ""
	f, err := migrate.NewFilterFromSpec(spec)
	if err != nil {
		return migrate.Inputs{}, err
	}
	return migrate.ReadInputs(ctx, c.Legacy, c.Kafka, f)
}

// recheckInputs reads the batch's inputs by known paths, the three stores' reads in parallel.
// Every answer must be complete, as ReadInputs demands.
func (c *Copier) recheckInputs(ctx context.Context, rc migrate.LegacyRechecker, plan migrate.Plan, chunk []migrate.GroupWrites) (migrate.Inputs, error) {
	reqs := make([]migrate.RecheckRequest, len(chunk))
	var topics []string
	for i, w := range chunk {
		reqs[i].Group = w.Group
		for _, e := range w.Entries {
			topics = append(topics, e.Topic)
			if !c.GatesOnly && c.Replan == nil {
				reqs[i].Offsets = append(reqs[i].Offsets, migrate.LegacyOffset{Topic: e.Topic, Partition: e.Partition, Path: e.Znode})
			}
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	names := groupNames(chunk)
	in := migrate.Inputs{Filter: plan.Filter, Retention: time.Duration(plan.Retention)}
	var wg sync.WaitGroup
	var errs [3]error
	wg.Go(func() { in.Legacy, errs[0] = rc.RecheckGroups(ctx, reqs) })
	if len(topics) > 0 { // never an empty metadata request: it means "all topics"
		wg.Go(func() { in.Topics, errs[1] = c.Kafka.Topics(ctx, topics) })
	}
	wg.Go(func() { in.Groups, errs[2] = c.Kafka.Groups(ctx, names) })
	wg.Wait()
	if errs[0] != nil {
		errs[0] = fmt.Errorf("re-read %d legacy groups: %w", len(names), errs[0])
	}
	if errs[1] != nil {
		errs[1] = fmt.Errorf("describe %d topics in kafka: %w", len(topics), errs[1])
	}
	if errs[2] != nil {
		errs[2] = fmt.Errorf("read %d groups from kafka: %w", len(names), errs[2])
	}
	if err := errors.Join(errs[:]...); err != nil {
		return migrate.Inputs{}, err
	}
	if len(in.Legacy) != len(names) {
		return migrate.Inputs{}, fmt.Errorf("re-read %d legacy groups: the store returned %d", len(names), len(in.Legacy))
	}
	for i, g := range in.Legacy {
		if g.Group != names[i] {
			return migrate.Inputs{}, fmt.Errorf("re-read legacy group %q: the store returned %q in its place", names[i], g.Group)
		}
		if c.GatesOnly && c.Replan == nil {
			in.Legacy[i].Offsets = plannedOffsets(chunk[i], plan.Policy.OffsetAdjust)
		}
	}
	for _, t := range topics {
		if _, ok := in.Topics[t]; !ok {
			return migrate.Inputs{}, fmt.Errorf("describe topic %q in kafka: no answer for it", t)
		}
	}
	for _, g := range names {
		if _, ok := in.Groups[g]; !ok {
			return migrate.Inputs{}, fmt.Errorf("read group %q from kafka: no answer for it", g)
		}
	}
	return in, nil
}

func groupNames(chunk []migrate.GroupWrites) []string {
	names := make([]string, len(chunk))
	for i, w := range chunk {
		names[i] = w.Group
	}
	return names
}

// plannedOffsets rebuilds the legacy offsets of a group's planned writes from the plan: the
// value read from ZooKeeper is the entry's ZK offset before --offset-adjust. A planned write
// always has one.
func plannedOffsets(w migrate.GroupWrites, adj int64) []migrate.LegacyOffset {
	out := make([]migrate.LegacyOffset, 0, len(w.Entries))
	for _, e := range w.Entries {
		o := migrate.LegacyOffset{Topic: e.Topic, Partition: e.Partition, Path: e.Znode, Mtime: e.Mtime}
		if e.ZK != nil {
			o.Offset = *e.ZK - adj
		} else {
			o.Invalid = "no ZooKeeper offset in the plan"
		}
		out = append(out, o)
	}
	return out
}
