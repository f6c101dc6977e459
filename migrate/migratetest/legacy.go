// Package migratetest holds in-memory fakes of the stores migrate talks to, for unit tests of
// the core and of the commands. They keep to the interfaces' contracts the way the real
// adapters must (sorted listings, copies rather than shared maps, per-partition commit errors,
// refusal to commit into an active group), so a test that passes here means something. It also
// holds the whole-plan forms of reading, writing and copying a plan, which only tests need: the
// commands work a group at a time.
package migratetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LegacyStore is an in-memory migrate.LegacyStore. The zero value is not usable: call
// NewLegacyStore. It is safe for concurrent use.
type LegacyStore struct {
	mu       sync.Mutex
	groups   map[string]migrate.LegacyGroup
	listErr  error
	readErr  map[string]error
	reads    int
	rechecks int
	// beforeAdvance runs at the start of each AdvanceOffsets call (see OnAdvance).
	beforeAdvance func(group string)
	// clock stamps the Mtime of each offset written, as ZooKeeper stamps a znode's: a fixed
	// start, one millisecond per write, so runs are reproducible and mtimes never go back.
	clock time.Time
	// watchers get every change (watch.go).
	watchers map[*watchRun]bool
}

// clockStart is the Mtime of the first offset a store writes.
var clockStart = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

var _ migrate.LegacyStore = (*LegacyStore)(nil)

// NewLegacyStore returns a store holding the given groups.
func NewLegacyStore(groups ...migrate.LegacyGroup) *LegacyStore {
	s := &LegacyStore{groups: map[string]migrate.LegacyGroup{}, readErr: map[string]error{}, clock: clockStart,
		watchers: map[*watchRun]bool{}}
	for _, g := range groups {
		s.SetGroup(g)
	}
	return s
}

// SetGroup adds or replaces a group.
func (s *LegacyStore) SetGroup(g migrate.LegacyGroup) {
	s.mu.Lock()
	_, existed := s.groups[g.Group]
	s.groups[g.Group] = cloneLegacy(g)
	s.mu.Unlock()
	s.notify(g.Group, !existed)
}

// DeleteGroup removes a group, as a recursive delete of /consumers/<group> does.
func (s *LegacyStore) DeleteGroup(group string) {
	s.mu.Lock()
	_, existed := s.groups[group]
	delete(s.groups, group)
	s.mu.Unlock()
	if existed {
		s.notify(group, true)
	}
}

// PutOffset adds or replaces (by Path) one offset znode of a group, creating the group if
// needed, as it is given: an Invalid or Note one too. An empty Path is the real layout's; a
// zero Mtime is stamped as a write's.
func (s *LegacyStore) PutOffset(group string, o migrate.LegacyOffset) {
	s.mu.Lock()
	_, existed := s.groups[group]
	s.putLocked(group, o)
	s.mu.Unlock()
	s.notify(group, !existed)
}

// DeleteOffset removes one offset znode of a group (by topic and partition, valid or not).
func (s *LegacyStore) DeleteOffset(group, topic string, partition int32) {
	s.mu.Lock()
	g, ok := s.groups[group]
	if ok {
		g.Offsets = slices.DeleteFunc(g.Offsets, func(o migrate.LegacyOffset) bool { return o.Topic == topic && o.Partition == partition })
		s.groups[group] = g
	}
	s.mu.Unlock()
	if ok {
		s.notify(group, false)
	}
}

// SetOffset sets one valid offset of a group, creating the group if needed, with the znode
// path the real layout has.
func (s *LegacyStore) SetOffset(group, topic string, partition int32, offset int64) {
	s.mu.Lock()
	_, existed := s.groups[group]
	s.setOffset(group, topic, partition, offset)
	s.mu.Unlock()
	s.notify(group, !existed)
}

// setOffset is SetOffset with s.mu held (and no report to watchers).
func (s *LegacyStore) setOffset(group, topic string, partition int32, offset int64) {
	s.putLocked(group, migrate.LegacyOffset{Topic: topic, Partition: partition, Offset: offset})
}

// putLocked is PutOffset with s.mu held (and no report to watchers).
func (s *LegacyStore) putLocked(group string, o migrate.LegacyOffset) {
	g := s.groups[group]
	g.Group = group
	if o.Path == "" {
		o.Path = fmt.Sprintf("/consumers/%s/offsets/%s/%d", group, o.Topic, o.Partition)
	}
	if o.Mtime.IsZero() {
		s.clock = s.clock.Add(time.Millisecond)
		o.Mtime = s.clock
	}
	i := slices.IndexFunc(g.Offsets, func(x migrate.LegacyOffset) bool { return x.Path == o.Path })
	if i >= 0 {
		g.Offsets[i] = o
	} else {
		g.Offsets = append(g.Offsets, o)
	}
	s.groups[group] = g
}

// FailList makes ListGroups return err (nil: succeed again).
func (s *LegacyStore) FailList(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr = err
}

// FailRead makes ReadGroups fail with err when it reaches group (nil: succeed again).
func (s *LegacyStore) FailRead(group string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.readErr, group)
		return
	}
	s.readErr[group] = err
}

// ReadCalls is how many times ReadGroups was called.
func (s *LegacyStore) ReadCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// ListGroups returns the group names, sorted.
func (s *LegacyStore) ListGroups(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listErr != nil {
		return nil, s.listErr
	}
	return slices.Sorted(maps.Keys(s.groups)), nil
}

// ReadGroups emits the asked groups in reverse order of the request, so callers cannot come
// to rely on the order. A group the store does not hold is emitted empty, as ZooKeeper's
// reader does (it was deleted between list and read).
func (s *LegacyStore) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	s.mu.Lock()
	s.reads++
	var out []migrate.LegacyGroup
	for _, name := range slices.Backward(groups) {
		if err := s.readErr[name]; err != nil {
			s.mu.Unlock()
			return fmt.Errorf("read group %q: %w", name, err)
		}
		g, ok := s.groups[name]
		if !ok {
			g = migrate.LegacyGroup{Group: name}
		}
		out = append(out, cloneLegacy(g))
	}
	s.mu.Unlock()
	for _, g := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(g); err != nil {
			return err
		}
	}
	return nil
}

// cloneLegacy copies a group for a caller, in the order the real reader gives: offsets by
// topic, partition, path; registrations sorted.
func cloneLegacy(g migrate.LegacyGroup) migrate.LegacyGroup {
	g.Offsets = slices.Clone(g.Offsets)
	slices.SortStableFunc(g.Offsets, func(a, b migrate.LegacyOffset) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Path, b.Path))
	})
	g.LiveConsumers = slices.Clone(g.LiveConsumers)
	slices.Sort(g.LiveConsumers)
	return g
}

var _ migrate.LegacyRechecker = (*LegacyStore)(nil)

// RecheckGroups returns each asked group's live consumers and the asked offsets it still holds
// (matched by path). A group the store does not hold comes back empty, as from zkreader.
func (s *LegacyStore) RecheckGroups(ctx context.Context, reqs []migrate.RecheckRequest) ([]migrate.LegacyGroup, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rechecks++
	out := make([]migrate.LegacyGroup, 0, len(reqs))
	for _, req := range reqs {
		if err := s.readErr[req.Group]; err != nil {
			return nil, fmt.Errorf("recheck group %q: %w", req.Group, err)
		}
		// A group the store does not hold has no registrations and no znodes, as zkreader
		// answers it (its listings of a missing path are empty).
		g := s.groups[req.Group]
		fresh := migrate.LegacyGroup{Group: req.Group, LiveConsumers: slices.Clone(g.LiveConsumers)}
		for _, want := range req.Offsets {
			if i := slices.IndexFunc(g.Offsets, func(o migrate.LegacyOffset) bool { return o.Path == want.Path }); i >= 0 {
				fresh.Offsets = append(fresh.Offsets, g.Offsets[i])
			}
		}
		out = append(out, cloneLegacy(fresh))
	}
	return out, nil
}

// RecheckCalls is how many times RecheckGroups was called.
func (s *LegacyStore) RecheckCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rechecks
}

// SetLive sets the group's live legacy consumer registrations (nil: none left).
func (s *LegacyStore) SetLive(group string, ids ...string) {
	s.mu.Lock()
	g, existed := s.groups[group]
	g.Group = group
	g.LiveConsumers = slices.Clone(ids)
	s.groups[group] = g
	s.mu.Unlock()
	s.notify(group, !existed)
}

// Offset returns a group's offset znode value, and whether it exists.
func (s *LegacyStore) Offset(group, topic string, partition int32) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.groups[group].Offsets {
		if o.Topic == topic && o.Partition == partition && o.Invalid == "" {
			return o.Offset, true
		}
	}
	return 0, false
}

// OnAdvance sets a hook run at the start of each AdvanceOffsets call, before its
// compare-and-set: a test's legacy consumer committing after the mirror's last read.
func (s *LegacyStore) OnAdvance(hook func(group string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeAdvance = hook
}

// AdvanceOffsets moves offsets forward as the real writer does (a migrate.LegacyOffsetWriter):
// per znode, only where it is missing or holds a valid smaller offset, decided under the lock
// that also guards every other write, so the compare and the set are one step.
func (s *LegacyStore) AdvanceOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) (map[migrate.TopicPartition]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	hook := s.beforeAdvance
	s.mu.Unlock()
	if hook != nil {
		hook(group)
	}
	s.mu.Lock()
	wrote := false
	defer func() {
		s.mu.Unlock()
		if wrote {
			s.notify(group, false)
		}
	}()
	left := map[migrate.TopicPartition]string{}
	if _, ok := s.groups[group]; !ok {
		for tp := range offsets {
			left[tp] = "the group was deleted from ZooKeeper: it is not created again"
		}
		return left, nil
	}
	for tp, off := range offsets {
		g := s.groups[group]
		i := slices.IndexFunc(g.Offsets, func(o migrate.LegacyOffset) bool { return o.Topic == tp.Topic && o.Partition == tp.Partition })
		switch {
		case i >= 0 && g.Offsets[i].Invalid != "":
			left[tp] = g.Offsets[i].Invalid
		case i >= 0 && g.Offsets[i].Offset >= off:
			left[tp] = fmt.Sprintf("zookeeper already at %d", g.Offsets[i].Offset)
		default:
			s.setOffset(group, tp.Topic, tp.Partition, off)
			wrote = true
		}
	}
	return left, nil
}

// WriteOffsets writes offsets as the real writer does (restore --to zk).
func (s *LegacyStore) WriteOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for tp, off := range offsets {
		s.SetOffset(group, tp.Topic, tp.Partition, off)
	}
	return nil
}
