package zkreader

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

var _ migrate.LegacyRechecker = (*Reader)(nil)

// RecheckGroups implements migrate.LegacyRechecker: for each group, the liveness registrations
// (ids/ and owners/, as ReadGroups reads them) and a Get of each requested offset znode, all
// pipelined over the pool, up to GroupsInFlight groups at once. Paths must lie under the
// group's offsets directory of this Reader's chroot. Nothing is listed under offsets/: a copy
// re-checks the znodes it is about to copy, by the paths the plan recorded.
func (r *Reader) RecheckGroups(ctx context.Context, reqs []migrate.RecheckRequest) ([]migrate.LegacyGroup, error) {
	out := make([]migrate.LegacyGroup, len(reqs))
	for _, req := range reqs {
		if err := ValidateName(req.Group); err != nil {
			return nil, fmt.Errorf("recheck group %q: not a valid group name: %w", req.Group, err)
		}
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(r.groupsInFlight)
	for i, req := range reqs {
		if gctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			if gctx.Err() != nil { // the first error came while this read waited for a slot
				return nil
			}
			g, err := r.recheckGroup(gctx, req)
			out[i] = g
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// recheckGroup reads one group's liveness and the requested znodes: the ids/ and owners/
// listings and every Get in one pipelined round, then the owners/<topic> registrations if any.
func (r *Reader) recheckGroup(ctx context.Context, req migrate.RecheckRequest) (migrate.LegacyGroup, error) {
	g := &groupRead{group: req.Group, base: r.path("/consumers/" + req.Group)}
	prefix := g.base + "/offsets/"
	znodes := make([]znode, len(req.Offsets))
	for i, o := range req.Offsets {
		topic, child, ok := strings.Cut(strings.TrimPrefix(o.Path, prefix), "/")
		if !strings.HasPrefix(o.Path, prefix) || !ok || topic != o.Topic || strings.Contains(child, "/") {
			return migrate.LegacyGroup{}, fmt.Errorf("recheck group %q: znode %s is not an offset of topic %q of this group under %s",
				req.Group, o.Path, o.Topic, r.servers())
		}
		znodes[i] = znode{path: o.Path, topic: o.Topic, child: path.Base(o.Path)}
	}
	lists := []string{g.base + "/ids", g.base + "/owners"}
	kids := make([]listing, len(lists))
	err := r.fanOut(ctx, len(lists)+len(znodes), func(c *zk.Conn, i int) error {
		if i < len(lists) {
			names, _, err := c.Children(lists[i])
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case errors.Is(err, zk.ErrNoAuth):
				kids[i].denied = true
			case err != nil:
				return fmt.Errorf("recheck group %q: list %s: %w", req.Group, lists[i], err)
			default:
				kids[i].names = names
			}
			return nil
		}
		return r.getZnode(c, g, znodes[i-len(lists)])
	})
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	g.liveList("ids", kids[0])
	g.liveList("owners", kids[1])
	if len(kids[1].names) > 0 {
		if err := r.readOwners(ctx, g, lists[1], kids[1].names); err != nil {
			return migrate.LegacyGroup{}, err
		}
	}
	return g.result(), nil
}

// readOwners reads the owners/<topic>/<partition> registrations of the given topics.
func (r *Reader) readOwners(ctx context.Context, g *groupRead, dir string, topics []string) error {
	dirs := make([]string, len(topics))
	for i, t := range topics {
		dirs[i] = dir + "/" + t
	}
	dkids, err := r.children(ctx, g.group, dirs)
	if err != nil {
		return err
	}
	var znodes []znode
	for i, d := range dkids {
		g.liveList("owners/"+topics[i], d)
		for _, p := range d.names {
			znodes = append(znodes, znode{path: dirs[i] + "/" + p, topic: topics[i], child: p, owner: true})
		}
	}
	return r.fanOut(ctx, len(znodes), func(c *zk.Conn, i int) error { return r.getZnode(c, g, znodes[i]) })
}

// getZnode fetches one znode into g: a missing one is absent, a denied one is reported.
func (r *Reader) getZnode(c *zk.Conn, g *groupRead, z znode) error {
	data, stat, err := c.Get(z.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil && !errors.Is(err, zk.ErrNoAuth):
		return fmt.Errorf("recheck group %q: get %s: %w", g.group, z.path, err)
	}
	g.add(z, data, stat, err)
	return nil
}
