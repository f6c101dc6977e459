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

// readGroup reads one group in three pipelined rounds: the group's offsets/ids/owners
// children, then the children of every topic under offsets/ and owners/, then every partition
// znode. Missing znodes are absent, denied ones are reported in the result.
func (r *Reader) readGroup(ctx context.Context, group string) (migrate.LegacyGroup, error) {
	g := &groupRead{group: group, base: r.path("/consumers/" + group)}
	lists := []string{g.base + "/offsets", g.base + "/ids", g.base + "/owners"}
	kids, err := r.children(ctx, group, lists)
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	offsetTopics, ids, ownerTopics := kids[0], kids[1], kids[2]
	g.deniedList(lists[0], "", kids[0])
	g.liveList("ids", ids)
	g.liveList("owners", ownerTopics)

	var dirs []string
	for _, t := range offsetTopics.names {
		dirs = append(dirs, lists[0]+"/"+t)
	}
	for _, t := range ownerTopics.names {
		dirs = append(dirs, lists[2]+"/"+t)
	}
	dkids, err := r.children(ctx, group, dirs)
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	var znodes []znode
	for i, d := range dkids {
		if i < len(offsetTopics.names) {
			t := offsetTopics.names[i]
			g.deniedList(dirs[i], t, d)
			for _, p := range d.names {
				znodes = append(znodes, znode{path: dirs[i] + "/" + p, topic: t, child: p})
			}
			continue
		}
		t := ownerTopics.names[i-len(offsetTopics.names)]
		g.liveList("owners/"+t, d)
		for _, p := range d.names {
			znodes = append(znodes, znode{path: dirs[i] + "/" + p, topic: t, child: p, owner: true})
		}
	}
	err = r.fanOut(ctx, len(znodes), func(c *zk.Conn, i int) error {
		z := znodes[i]
		data, stat, err := c.Get(z.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil // deleted since it was listed: simply absent
		case err != nil && !errors.Is(err, zk.ErrNoAuth):
			return fmt.Errorf("read group %q: get %s: %w", group, z.path, err)
		}
		g.add(z, data, stat, err)
		return nil
	})
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	return g.result(), nil
}

// listing is the outcome of one getChildren: names, or denied.
type listing struct {
	names  []string
	denied bool
}

// children lists every path concurrently. A missing path has no children.
func (r *Reader) children(ctx context.Context, group string, paths []string) ([]listing, error) {
	out := make([]listing, len(paths))
	err := r.fanOut(ctx, len(paths), func(c *zk.Conn, i int) error {
		names, _, err := c.Children(paths[i])
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case errors.Is(err, zk.ErrNoAuth):
			out[i].denied = true
		case err != nil:
			return fmt.Errorf("read group %q: list %s: %w", group, paths[i], err)
		default:
			slices.Sort(names)
			out[i].names = names
		}
		return nil
	})
	return out, err
}

// znode is one partition znode to get: an offset, or an owner registration.
type znode struct {
	path, topic, child string
	owner              bool
}

// groupRead collects one group's results from concurrent calls.
type groupRead struct {
	group, base string
	mu          sync.Mutex
	offsets     []migrate.LegacyOffset
	live        []string
}

// deniedList records an offsets directory the session may not list: its offsets are unknown,
// which must show in the plan rather than look like "no offsets".
func (g *groupRead) deniedList(path, topic string, l listing) {
	if !l.denied {
		return
	}
	what := "the group's topics"
	if topic != "" {
		what = "the topic's partitions"
	}
	g.offsets = append(g.offsets, migrate.LegacyOffset{
		Topic: topic, Partition: -1, Path: path,
		Invalid: fmt.Sprintf("%s: cannot list %s", denied, what),
	})
}

// liveList records the ids/<id> registrations, or a denied liveness directory: unknown
// liveness counts as alive, so the group stays gated until someone can look.
func (g *groupRead) liveList(rel string, l listing) {
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

// add records one fetched znode; err is nil or zk.ErrNoAuth.
func (g *groupRead) add(z znode, data []byte, stat *zk.Stat, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if z.owner {
		entry := "owners/" + z.topic + "/" + z.child
		if err != nil {
			g.live = append(g.live, entry+": "+denied)
		} else {
			g.live = append(g.live, entry+"="+string(bytes.TrimSpace(data)))
		}
		return
	}
	o := migrate.LegacyOffset{Topic: z.topic, Partition: -1, Path: z.path}
	p, perr := ParsePartition(z.child)
	if perr == nil {
		o.Partition = p
	}
	if err != nil {
		o.Invalid = denied // and no stat: the server sends none with an error
		g.offsets = append(g.offsets, o)
		return
	}
	o.Mtime = time.UnixMilli(stat.Mtime).UTC()
	if perr != nil {
		o.Invalid = perr.Error()
	} else if v, verr := ParseOffset(data); verr != nil {
		o.Invalid = verr.Error()
	} else {
		o.Offset = v
	}
	g.offsets = append(g.offsets, o)
}

// result sorts the collected group: by topic, partition, then path.
func (g *groupRead) result() migrate.LegacyGroup {
	slices.SortFunc(g.offsets, func(a, b migrate.LegacyOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	slices.Sort(g.live)
	return migrate.LegacyGroup{Group: g.group, Offsets: g.offsets, LiveConsumers: g.live}
}
