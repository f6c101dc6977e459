package copier

import (
	"context"
	"iter"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// PlanSourceForTest is the plan copy executes, for the external tests: its groups, its counts
// and whether it sits in a file.
type PlanSourceForTest struct{ s *planSource }

func (p PlanSourceForTest) Groups() iter.Seq2[[]migrate.GroupPlan, error] { return p.s.groups() }
func (p PlanSourceForTest) Stats() *PlanStats                             { return p.s.stats }
func (p PlanSourceForTest) Path() string                                  { return p.s.path }
func (p PlanSourceForTest) OnDisk() bool                                  { return p.s.f != nil }
func (p PlanSourceForTest) Close() error                                  { return p.s.close() }

// OpenPlanSourceForTest opens a saved plan file as Copy does.
func OpenPlanSourceForTest(path string) (PlanSourceForTest, error) {
	s, err := openPlanSource(path)
	return PlanSourceForTest{s}, err
}

// SpillFreshForTest plans afresh and keeps the writes as Copy does, spilling past limit.
func SpillFreshForTest(ctx context.Context, pl *migrate.Planner, limit int) (PlanSourceForTest, error) {
	s, err := spillFresh(ctx, pl, limit, time.Now())
	return PlanSourceForTest{s}, err
}
