package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// PlanStats is what copy keeps of a plan it streams instead of holding: the head (every field
// but the groups), the summary, how many groups have writes, and the first blocked entries.
type PlanStats struct {
	Head        migrate.Plan
	Summary     migrate.Summary
	WriteGroups int
	// Blocked names the first BlockedLimit blocked entries (group, topic, partition, class,
	// reason); Summary counts them all.
	Blocked []string
}

// BlockedLimit is how many blocked entries PlanStats names.
const BlockedLimit = 20

// NewPlanStats starts the stats of a plan with the given head.
func NewPlanStats(head migrate.Plan) *PlanStats {
	head.Groups = nil
	return &PlanStats{Head: head, Summary: migrate.NewSummary()}
}

// Add counts one more group of the plan.
func (s *PlanStats) Add(g migrate.GroupPlan) {
	s.Summary.Add(g)
	writes := false
	for _, e := range g.Entries {
		switch e.Action {
		case migrate.ActionWrite:
			writes = true
		case migrate.ActionBlock:
			if len(s.Blocked) < BlockedLimit {
				s.Blocked = append(s.Blocked, fmt.Sprintf("group %q topic %q partition %d: %s: %s", g.Group, e.Topic, e.Partition, e.Class, e.Reason))
			}
		}
	}
	if writes {
		s.WriteGroups++
	}
}

// Safe reports whether no entry is blocked.
func (s *PlanStats) Safe() bool { return s.Summary.ByAction[migrate.ActionBlock] == 0 }

// SavedCheck is the outcome of CheckSaved.
type SavedCheck struct {
	Saved *PlanStats       // the saved plan, Head with its fingerprint
	Fresh migrate.PlanTail // the fresh plan of the same selection and policy
	// Drift holds the first DriftLimit lines of Drift(saved, fresh), DriftCount counts them all.
	Drift      []string
	DriftCount int
}

// DriftLimit is how many drift lines CheckSaved keeps.
const DriftLimit = 20

// CheckSaved reads the saved plan (the file name, for messages) from r whole and strictly (Scan) while pl plans the same
// selection afresh, and compares the two group by group, both in name order, as Drift does: it
// holds one group of each at a time. pl's filter and policy must be the saved plan's. Only a
// nil error means the whole file was read and checked; nothing is written by it.
func CheckSaved(ctx context.Context, name string, r io.Reader, pl *migrate.Planner, now time.Time) (SavedCheck, error) {
	var head migrate.Plan
	var scanErr error
	var stats *PlanStats
	saved := func(yield func(migrate.GroupPlan) bool) {
		head, scanErr = planfile.Scan(r, func(g migrate.GroupPlan) error {
			if !yield(g) {
				return errStopped
			}
			return nil
		})
	}
	next, stop := iter.Pull(saved)
	defer stop()
	res := SavedCheck{}
	drift := func(lines ...string) {
		res.DriftCount += len(lines)
		for _, l := range lines {
			if len(res.Drift) < DriftLimit {
				res.Drift = append(res.Drift, l)
			}
		}
	}
	stats = &PlanStats{Summary: migrate.NewSummary()}
	var pending *migrate.GroupPlan
	pull := func() *migrate.GroupPlan {
		if g, ok := next(); ok {
			stats.Add(g)
			return &g
		}
		return nil
	}
	pending = pull()
	sink := sinkFuncs{groups: func(gs []migrate.GroupPlan) error {
		for _, fg := range gs {
			for pending != nil && pending.Group < fg.Group {
				drift(DriftGone(pending.Group))
				pending = pull()
			}
			if pending != nil && pending.Group == fg.Group {
				drift(GroupDrift(*pending, fg)...)
				pending = pull()
				continue
			}
			drift(DriftNew(fg.Group))
		}
		return nil
	}}
	tail, err := pl.Stream(ctx, now, sink)
	if err != nil {
		return SavedCheck{}, err
	}
	for ; pending != nil; pending = pull() {
		drift(DriftGone(pending.Group))
	}
	stop() // the scan has ended: head and scanErr are set
	if scanErr != nil {
		return SavedCheck{}, fmt.Errorf("plan file %s: %w", name, scanErr)
	}
	h := NewPlanStats(head)
	stats.Head = h.Head
	res.Saved, res.Fresh = stats, tail
	return res, nil
}

// errStopped ends a scan whose reader stopped pulling.
var errStopped = errors.New("stopped")

// sinkFuncs is a PlanSink of functions; a nil one does nothing.
type sinkFuncs struct {
	head   func(migrate.Plan) error
	groups func([]migrate.GroupPlan) error
}

func (s sinkFuncs) Head(p migrate.Plan) error {
	if s.head == nil {
		return nil
	}
	return s.head(p)
}

func (s sinkFuncs) Groups(gs []migrate.GroupPlan) error {
	if s.groups == nil {
		return nil
	}
	return s.groups(gs)
}
