package migrate

import (
	"context"
	"sync"
)

// ReadProgress is how far a read of the legacy store has come: the core reports it, the
// caller decides whether and how to show it.
type ReadProgress struct {
	Groups      int // groups read so far
	GroupsTotal int // groups asked for
	Offsets     int // offset znodes among them (what a legacy store holds per partition)
}

// ReadProgressFunc is told of a read's progress: once as the read starts (Groups 0), then
// after each group, one call at a time. It must return quickly: the read waits for it.
type ReadProgressFunc func(ReadProgress)

// WithReadProgress returns legacy with its ReadGroups reported to report; ListGroups is passed
// through. It is only the reading side: a store's other interfaces (LegacyRechecker, the
// writers) are not on the result, so pass it where groups are read (a Planner, ReadInputs),
// not to a Copier. A nil report returns legacy itself.
func WithReadProgress(legacy LegacyStore, report ReadProgressFunc) LegacyStore {
	if report == nil {
		return legacy
	}
	return &progressLegacy{LegacyStore: legacy, report: report}
}

type progressLegacy struct {
	LegacyStore
	report ReadProgressFunc
}

func (p *progressLegacy) ReadGroups(ctx context.Context, groups []string, emit func(LegacyGroup) error) error {
	var mu sync.Mutex // the store may emit from several goroutines
	st := ReadProgress{GroupsTotal: len(groups)}
	p.report(st)
	return p.LegacyStore.ReadGroups(ctx, groups, func(g LegacyGroup) error {
		mu.Lock()
		st.Groups++
		st.Offsets += len(g.Offsets)
		p.report(st)
		mu.Unlock()
		return emit(g)
	})
}
