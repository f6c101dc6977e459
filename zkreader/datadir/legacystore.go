package datadir

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// ListGroups returns the children of <chroot>/consumers, sorted. A missing /consumers means no
// groups; a missing chroot is an error, as for the live reader.
func (s *Store) ListGroups(ctx context.Context) ([]string, error) {
	if !s.t.chrootExists {
		return nil, fmt.Errorf("zookeeper data directory %s at zxid %#x: the chroot %s does not exist", s.info.Dir, s.info.Zxid, s.t.chroot)
	}
	if s.t.consumers == nil {
		return nil, nil
	}
	kids := s.t.consumers.children()
	groups := make([]string, len(kids))
	for i, g := range kids {
		groups[i] = g.name
	}
	return groups, nil
}

// ReadGroups emits each requested group once, in request order, from the loaded tree.
func (s *Store) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	seen := make(map[string]bool, len(groups))
	for _, g := range groups {
		if err := zkreader.ValidateName(g); err != nil {
			return fmt.Errorf("read group %q: not a valid group name: %w", g, err)
		}
	}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(s.group(g)); err != nil {
			return fmt.Errorf("read group %q: emit: %w", g, err)
		}
	}
	return nil
}

// RecheckGroups answers the re-read of copy with the same tree: a data directory does not
// change, so the re-check finds what the plan read (the point is that copy's code path is the
// same for both stores).
func (s *Store) RecheckGroups(ctx context.Context, reqs []migrate.RecheckRequest) ([]migrate.LegacyGroup, error) {
	out := make([]migrate.LegacyGroup, len(reqs))
	for i, req := range reqs {
		if err := zkreader.ValidateName(req.Group); err != nil {
			if len(req.Offsets) > 0 {
				return nil, fmt.Errorf("recheck group %q: not a valid group name: %w", req.Group, err)
			}
			out[i] = migrate.LegacyGroup{Group: req.Group} // nothing can be registered under it
			continue
		}
		base := s.t.root + "/" + req.Group
		prefix := base + "/offsets/"
		gn := s.t.lookup(base)
		lg := migrate.LegacyGroup{Group: req.Group, LiveConsumers: s.liveness(gn)}
		for _, o := range req.Offsets {
			topic, child, ok := strings.Cut(strings.TrimPrefix(o.Path, prefix), "/")
			if !strings.HasPrefix(o.Path, prefix) || !ok || topic != o.Topic || strings.Contains(child, "/") {
				return nil, fmt.Errorf("recheck group %q: znode %s is not an offset of topic %q of this group under %s",
					req.Group, o.Path, o.Topic, s.t.root)
			}
			if tn := s.t.lookup(base + "/offsets/" + topic); tn != nil {
				if n := tn.child([]byte(child)); n != nil {
					lg.Offsets = append(lg.Offsets, offsetOf(topic, o.Path, child, n.leaf))
				} else if p, err := zkreader.ParsePartition(child); err == nil && tn.parts != nil {
					if i, found := tn.parts.find(p); found {
						off, mtime := tn.parts.get(i)
						lg.Offsets = append(lg.Offsets, migrate.LegacyOffset{Topic: topic, Partition: p, Offset: off,
							Path: o.Path, Mtime: time.UnixMilli(mtime).UTC()})
					}
				}
			}
		}
		sortOffsets(lg.Offsets)
		out[i] = lg
	}
	return out, ctx.Err()
}

// group is one group as the live reader reports it: its offsets in (topic, partition, path)
// order, and its liveness registrations sorted. The znode paths are cut from one string per
// group.
func (s *Store) group(name string) migrate.LegacyGroup {
	base := s.t.root + "/" + name
	gn := s.t.lookup(base)
	lg := migrate.LegacyGroup{Group: name, LiveConsumers: s.liveness(gn)}
	if gn == nil {
		return lg
	}
	offs := gn.child([]byte("offsets"))
	if offs == nil {
		return lg
	}
	topics := offs.children()
	n, size := 0, 0
	for _, tn := range topics {
		dir := len(base) + len("/offsets/") + len(tn.name) + 1
		for _, c := range tn.children() {
			n++
			size += dir + len(c.name)
		}
		if ps := tn.parts; ps != nil {
			for i := range ps.len() {
				n++
				size += dir + decimalLen(ps.part(i))
			}
		}
	}
	if n == 0 {
		return lg
	}
	var b strings.Builder
	b.Grow(size)
	type span struct{ from, to int }
	spans := make([]span, 0, n)
	lg.Offsets = make([]migrate.LegacyOffset, 0, n)
	var num [12]byte
	for _, tn := range topics {
		dir := func() int {
			from := b.Len()
			b.WriteString(base)
			b.WriteString("/offsets/")
			b.WriteString(tn.name)
			b.WriteByte('/')
			return from
		}
		if ps := tn.parts; ps != nil {
			for i := range ps.len() {
				p := ps.part(i)
				from := dir()
				b.Write(strconv.AppendInt(num[:0], int64(p), 10))
				spans = append(spans, span{from, b.Len()})
				off, mtime := ps.get(i)
				lg.Offsets = append(lg.Offsets, migrate.LegacyOffset{Topic: tn.name, Partition: p, Offset: off,
					Mtime: time.UnixMilli(mtime).UTC()})
			}
		}
		for _, c := range tn.children() {
			from := dir()
			b.WriteString(c.name)
			spans = append(spans, span{from, b.Len()})
			lg.Offsets = append(lg.Offsets, offsetOf(tn.name, "", c.name, c.leaf))
		}
	}
	paths := b.String()
	for i, sp := range spans {
		lg.Offsets[i].Path = paths[sp.from:sp.to]
	}
	sortOffsets(lg.Offsets)
	return lg
}

// decimalLen is the length of a partition number in decimal.
func decimalLen(p int32) int {
	n := 1
	for v := p; v >= 10; v /= 10 {
		n++
	}
	if p < 0 {
		n++ // a compact partition is never negative; for completeness
	}
	return n
}

// offsetOf reads one offset znode kept with its data, with the live reader's parsing: the
// same partition name and data rules, so that a plan from a data directory matches the live
// plan entry for entry.
func offsetOf(topic, path, child string, d *leafData) migrate.LegacyOffset {
	o := migrate.LegacyOffset{Topic: topic, Partition: -1, Path: path, Mtime: time.UnixMilli(d.mtime).UTC()}
	p, err := zkreader.ParsePartition(child)
	if err != nil {
		o.Invalid = err.Error() // whatever the znode holds
		return o
	}
	o.Partition = p
	if v, note, err := zkreader.ParseOffsetNote([]byte(d.data)); err != nil {
		o.Invalid = err.Error()
	} else {
		o.Offset, o.Note = v, note
	}
	return o
}

func sortOffsets(offs []migrate.LegacyOffset) {
	slices.SortFunc(offs, func(a, b migrate.LegacyOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if a.Partition != b.Partition {
			return compareZxid(int64(a.Partition), int64(b.Partition))
		}
		return strings.Compare(a.Path, b.Path)
	})
}

func (s *Store) liveness(gn *node) []string {
	if s.ignoreLive {
		return nil
	}
	return liveness(gn)
}

// liveness lists a group's registrations as the live reader does: "ids/<id>" for each
// consumer id, "owners/<topic>/<partition>=<owner>" for each claimed partition. In a data
// directory these ephemerals are the ones registered at the zxid read: the sessions that
// owned them are gone with the server, so they say who was running then, not now.
func liveness(gn *node) []string {
	if gn == nil {
		return nil
	}
	var live []string
	if ids := gn.child([]byte("ids")); ids != nil {
		for _, id := range ids.children() {
			live = append(live, "ids/"+id.name)
		}
	}
	if owners := gn.child([]byte("owners")); owners != nil {
		for _, tn := range owners.children() {
			for _, pn := range tn.children() {
				live = append(live, "owners/"+tn.name+"/"+pn.name+"="+strings.TrimSpace(pn.leaf.data))
			}
		}
	}
	slices.Sort(live)
	return live
}
