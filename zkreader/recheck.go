package zkreader

import (
	"context"
	"fmt"
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
	for i, req := range reqs {
		if err := ValidateName(req.Group); err != nil {
			if len(req.Offsets) > 0 {
				return nil, fmt.Errorf("recheck group %q: not a valid group name: %w", req.Group, err)
			}
			// A Kafka group name ZooKeeper cannot hold (a "/" in it, say: a restore's target)
			// has no legacy consumers: nothing can be registered under it.
			out[i] = migrate.LegacyGroup{Group: req.Group}
		}
	}
	if r.multi.Load() {
		valid := make([]bool, len(reqs))
		for i, req := range reqs {
			valid[i] = ValidateName(req.Group) == nil
		}
		if err := r.recheckMulti(ctx, reqs, valid, out); err != nil {
			return nil, err
		}
		return out, ctx.Err()
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(r.groupsInFlight)
	for i, req := range reqs {
		if gctx.Err() != nil {
			break
		}
		if ValidateName(req.Group) != nil {
			continue
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
	g, slots, err := r.recheckSlots(req)
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	lists := []string{g.base + "/ids", g.base + "/owners"}
	kids := make([]listing, len(lists))
	err = r.fanOut(ctx, len(lists)+len(slots), func(c *zk.Conn, i int) error {
		if i < len(lists) {
			var err error
			kids[i], err = g.list(c, lists[i])
			return err
		}
		return g.getOffset(c, &slots[i-len(lists)])
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
	dkids, err := r.children(ctx, g.verb, g.group, dirs)
	if err != nil {
		return err
	}
	type owner struct{ path, entry string }
	var owned []owner
	for i, d := range dkids {
		g.liveList("owners/"+topics[i], d)
		for _, p := range d.names {
			owned = append(owned, owner{dirs[i] + "/" + p, "owners/" + topics[i] + "/" + p})
		}
	}
	return r.fanOut(ctx, len(owned), func(c *zk.Conn, i int) error { return g.getOwner(c, owned[i].path, owned[i].entry) })
}

// recheckSlots checks the paths of a recheck request and lays out the slots their Gets fill, in
// the group's read whose result they become.
func (r *Reader) recheckSlots(req migrate.RecheckRequest) (*groupRead, []offsetSlot, error) {
	g := &groupRead{verb: "recheck", group: req.Group, base: r.path("/consumers/" + req.Group)}
	prefix := g.base + "/offsets/"
	slots := make([]offsetSlot, len(req.Offsets))
	for i, o := range req.Offsets {
		topic, child, ok := strings.Cut(strings.TrimPrefix(o.Path, prefix), "/")
		if !strings.HasPrefix(o.Path, prefix) || !ok || topic != o.Topic || strings.Contains(child, "/") {
			return nil, nil, fmt.Errorf("recheck group %q: znode %s is not an offset of topic %q of this group under %s",
				req.Group, o.Path, o.Topic, r.servers())
		}
		slots[i] = newSlot(o.Topic, o.Path, child)
	}
	sortSlots(slots)
	g.topics = []topicRead{{slots: slots}}
	return g, slots, nil
}
