package zkreader

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// readGroup reads one group's offsets and liveness as one tree of pipelined requests: the
// group's offsets/, ids/ and owners/ listings; as each answers, the listing of each of its
// topics; as each of those answers, a Get of each partition znode. No request waits for a
// sibling's answer: three rounds with a barrier after each (all listings, then all topic
// listings, then the Gets) left the pipeline half empty at every barrier, far slower than the
// bare Gets on the same pool (docs/benchmarks.md).
// Missing znodes are absent, denied ones are reported in the result.
//
// Each listing lays out the slots its Gets fill, already in the result's order (topics as
// listed, partitions by number), so the answers, which come back in any order, need neither a
// lock nor a sort.
func (r *Reader) readGroup(ctx context.Context, group string) (migrate.LegacyGroup, error) {
	g := &groupRead{verb: "read", group: group, base: r.path("/consumers/" + group)}
	p := r.newPipe(ctx)
	list := func(path string, then func(listing) error) {
		p.run(func(c *zk.Conn) (func() error, error) {
			l, err := g.list(c, path)
			if err != nil {
				return nil, err
			}
			return func() error { return then(l) }, nil
		})
	}
	getOffset := func(s *offsetSlot) {
		p.run(func(c *zk.Conn) (func() error, error) { return nil, g.getOffset(c, s) })
	}
	getOwner := func(path, entry string) {
		p.run(func(c *zk.Conn) (func() error, error) { return nil, g.getOwner(c, path, entry) })
	}
	offsets, owners := g.base+"/offsets", g.base+"/owners"
	list(offsets, func(l listing) error {
		if l.denied {
			g.topics = []topicRead{{denied: deniedDir(offsets, "")}}
			return nil
		}
		g.topics = make([]topicRead, len(l.names))
		for i, t := range l.names {
			dir := offsets + "/" + t
			list(dir, func(d listing) error {
				tr := &g.topics[i]
				if d.denied {
					tr.denied = deniedDir(dir, t)
					return nil
				}
				tr.slots = offsetSlots(dir, t, d.names)
				for j := range tr.slots {
					getOffset(&tr.slots[j])
				}
				return nil
			})
		}
		return nil
	})
	list(g.base+"/ids", func(l listing) error {
		g.liveList("ids", l)
		return nil
	})
	list(owners, func(l listing) error {
		g.liveList("owners", l)
		for _, t := range l.names {
			dir := owners + "/" + t
			list(dir, func(d listing) error {
				g.liveList("owners/"+t, d)
				for _, part := range d.names {
					getOwner(dir+"/"+part, "owners/"+t+"/"+part)
				}
				return nil
			})
		}
		return nil
	})
	if err := p.wait(); err != nil {
		return migrate.LegacyGroup{}, err
	}
	return g.result(), nil
}

// listChildren lists one path: a missing path has no children, a denied one is marked. verb
// names the read in errors ("read", "recheck").
func listChildren(c *zk.Conn, verb, group, path string) (listing, error) {
	names, _, err := c.Children(path)
	return listed(verb, group, path, names, err)
}

// listed sorts the outcome of one getChildren, sent alone or in a multiRead, so that both paths
// report the same.
func listed(verb, group, path string, names []string, err error) (listing, error) {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return listing{}, nil
	case errors.Is(err, zk.ErrNoAuth):
		return listing{denied: true}, nil
	case err != nil:
		return listing{}, fmt.Errorf("%s group %q: list %s: %w", verb, group, path, err)
	}
	slices.Sort(names)
	return listing{names: names}, nil
}

// listing is the outcome of one getChildren: names, or denied.
type listing struct {
	names  []string
	denied bool
}

// children lists every path concurrently. A missing path has no children.
func (r *Reader) children(ctx context.Context, verb, group string, paths []string) ([]listing, error) {
	out := make([]listing, len(paths))
	err := r.fanOut(ctx, len(paths), func(c *zk.Conn, i int) error {
		var err error
		out[i], err = listChildren(c, verb, group, paths[i])
		return err
	})
	return out, err
}

// groupRead collects one group's results from concurrent calls; verb names the read in errors
// ("read", "recheck").
type groupRead struct {
	verb, group, base string
	// topics holds one entry per listed topic, in name order; each is written by its own
	// listing and Gets only, and read after they have all answered.
	topics []topicRead
	mu     sync.Mutex // guards live
	live   []string
}

// topicRead is one topic directory: its partition znodes, or the denial of its listing.
type topicRead struct {
	denied *migrate.LegacyOffset
	slots  []offsetSlot
}

// offsetSlot is one listed offset znode, filled by its Get.
type offsetSlot struct {
	migrate.LegacyOffset
	read bool // false: gone since it was listed
}

// offsetSlots lays out the znodes named under dir in the result's order: by partition, then
// by path (every name that is not a partition number has partition -1 and its parse error).
func offsetSlots(dir, topic string, names []string) []offsetSlot {
	slots := make([]offsetSlot, len(names))
	for i, name := range names {
		slots[i] = newSlot(topic, dir+"/"+name, name)
	}
	sortSlots(slots)
	return slots
}

// newSlot is the slot of the offset znode at path, named name under its topic's directory.
func newSlot(topic, path, name string) offsetSlot {
	o := migrate.LegacyOffset{Topic: topic, Partition: -1, Path: path}
	if p, err := ParsePartition(name); err == nil {
		o.Partition = p
	} else {
		o.Invalid = err.Error()
	}
	return offsetSlot{LegacyOffset: o}
}

// sortSlots puts slots in the result's order; the Gets then fill them in place.
func sortSlots(slots []offsetSlot) {
	slices.SortFunc(slots, func(a, b offsetSlot) int { return compareOffsets(a.LegacyOffset, b.LegacyOffset) })
}

// compareOffsets is the order of a group's offsets in its result: topic, partition, path. The
// paths are compared only on a tie: cmp.Or would compare them (long, with a shared prefix) on
// every call.
func compareOffsets(a, b migrate.LegacyOffset) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// fill records the Get of the slot's znode; err is nil or zk.ErrNoAuth. A name that is not a
// partition number keeps its parse error whatever the znode holds.
func (s *offsetSlot) fill(data []byte, stat *zk.Stat, err error) {
	s.read = true
	if err != nil {
		s.Invalid = denied // and no stat: the server sends none with an error
		return
	}
	s.Mtime = time.UnixMilli(stat.Mtime).UTC()
	if s.Invalid != "" {
		return
	}
	if v, note, verr := ParseOffsetNote(data); verr != nil {
		s.Invalid = verr.Error()
	} else {
		s.Offset, s.Note = v, note
	}
}

// deniedDir is the entry of an offsets directory the session may not list: its offsets are
// unknown, which must show in the plan rather than look like "no offsets".
func deniedDir(path, topic string) *migrate.LegacyOffset {
	what := "the group's topics"
	if topic != "" {
		what = "the topic's partitions"
	}
	return &migrate.LegacyOffset{Topic: topic, Partition: -1, Path: path,
		Invalid: fmt.Sprintf("%s: cannot list %s", denied, what)}
}

// liveList records the ids/<id> registrations, or a denied liveness directory: unknown
// liveness counts as alive, so the group stays gated until someone can look.
func (g *groupRead) liveList(rel string, l listing) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.denied {
		g.live = append(g.live, rel+": "+denied)
		return
	}
	if rel == "ids" {
		for _, id := range l.names {
			g.live = append(g.live, "ids/"+id)
		}
	}
}

func (g *groupRead) list(c *zk.Conn, path string) (listing, error) {
	return listChildren(c, g.verb, g.group, path)
}

// getOffset fetches the slot's znode into it: one gone since it was listed stays unread (simply
// absent), a denied one is recorded; any other failure ends the read.
func (g *groupRead) getOffset(c *zk.Conn, s *offsetSlot) error {
	data, stat, err := c.Get(s.Path)
	return g.gotOffset(s, data, stat, err)
}

// gotOffset records the answer to the Get of the slot's znode, sent alone or in a multiRead.
func (g *groupRead) gotOffset(s *offsetSlot, data []byte, stat *zk.Stat, err error) error {
	if found, err := g.answered(s.Path, err); !found {
		return err
	}
	s.fill(data, stat, err)
	return nil
}

// getOwner fetches one owners/<topic>/<partition> registration, as getOffset an offset.
func (g *groupRead) getOwner(c *zk.Conn, path, entry string) error {
	data, _, err := c.Get(path)
	return g.gotOwner(path, entry, data, err)
}

// gotOwner records the answer to the Get of an owners/<topic>/<partition> registration.
func (g *groupRead) gotOwner(path, entry string, data []byte, err error) error {
	if found, err := g.answered(path, err); !found {
		return err
	}
	g.owner(entry, data, err)
	return nil
}

// answered sorts the outcome of one Get: found, with err nil or zk.ErrNoAuth (the caller
// records the denial); not found and no error when the znode is gone; or the error that ends
// the read.
func (g *groupRead) answered(path string, err error) (found bool, _ error) {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return false, nil
	case err != nil && !errors.Is(err, zk.ErrNoAuth):
		return false, fmt.Errorf("%s group %q: get %s: %w", g.verb, g.group, path, err)
	}
	return true, nil
}

// owner records one owners/<topic>/<partition> registration; err is nil or zk.ErrNoAuth.
func (g *groupRead) owner(entry string, data []byte, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.live = append(g.live, entry+": "+denied)
	} else {
		g.live = append(g.live, entry+"="+string(bytes.TrimSpace(data)))
	}
}

// result gathers the group's offsets, already in order (topic, partition, path), and its
// sorted liveness entries.
func (g *groupRead) result() migrate.LegacyGroup {
	n := 0
	for _, t := range g.topics {
		n += len(t.slots) + 1
	}
	offsets := make([]migrate.LegacyOffset, 0, n)
	for _, t := range g.topics {
		if t.denied != nil {
			offsets = append(offsets, *t.denied)
		}
		for _, s := range t.slots {
			if s.read {
				offsets = append(offsets, s.LegacyOffset)
			}
		}
	}
	if len(offsets) == 0 {
		offsets = nil // as a group without offsets has always been reported
	}
	slices.Sort(g.live)
	return migrate.LegacyGroup{Group: g.group, Offsets: offsets, LiveConsumers: g.live}
}
