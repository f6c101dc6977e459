package zkreader

import (
	"context"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The reads of ZooKeeper 3.6+ (the fast path), in multiRead batches: the same outcomes as
// readGroup and recheckGroup, which stay the path of older servers, and share with them every
// rule that turns an answer into a result (listed, gotOffset, gotOwner).

// readGroupMulti reads one group as readGroup does, in three rounds: the group's offsets/,
// ids/ and owners/ listings in one multiRead; the listings of their topics; the Gets of every
// partition and owner znode found, in batches of batchOps. The rounds of one group wait for
// each other, but GroupsInFlight groups are read at once, which keeps the pipeline full.
func (r *Reader) readGroupMulti(ctx context.Context, group string) (migrate.LegacyGroup, error) {
	g := &groupRead{verb: "read", group: group, base: r.path("/consumers/" + group)}
	offsets, owners := g.base+"/offsets", g.base+"/owners"
	top, err := r.lists(ctx, g, []string{offsets, g.base + "/ids", owners})
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	g.liveList("ids", top[1])
	g.liveList("owners", top[2])
	var dirs []string
	if top[0].denied {
		g.topics = []topicRead{{denied: deniedDir(offsets, "")}}
	} else {
		g.topics = make([]topicRead, len(top[0].names))
		for _, t := range top[0].names {
			dirs = append(dirs, offsets+"/"+t)
		}
	}
	nTopics := len(dirs)
	for _, t := range top[2].names {
		dirs = append(dirs, owners+"/"+t)
	}
	sub, err := r.lists(ctx, g, dirs)
	if err != nil {
		return migrate.LegacyGroup{}, err
	}
	var gets getList
	for i := range nTopics {
		tr, t := &g.topics[i], top[0].names[i]
		if sub[i].denied {
			tr.denied = deniedDir(dirs[i], t)
			continue
		}
		tr.slots = offsetSlots(dirs[i], t, sub[i].names)
		gets.offsets(g, tr.slots)
	}
	for k, t := range top[2].names {
		g.liveList("owners/"+t, sub[nTopics+k])
		gets.owners(g, dirs[nTopics+k], t, sub[nTopics+k].names)
	}
	if err := r.runGets(ctx, gets); err != nil {
		return migrate.LegacyGroup{}, err
	}
	return g.result(), nil
}

// recheckMulti rechecks every group of reqs (valid[i] false: skipped) as recheckGroup does one,
// all groups together: the ids/ and owners/ listings and the requested Gets of every group in
// one round of multiReads (a copy batch's usual case, with no owners registered, ends there),
// then the owners/<topic> listings and registrations of the groups that have any.
func (r *Reader) recheckMulti(ctx context.Context, reqs []migrate.RecheckRequest, valid []bool, out []migrate.LegacyGroup) error {
	type group struct {
		i int
		g *groupRead
	}
	var groups []group
	var ops []readOp
	var gets getList
	for i, req := range reqs {
		if !valid[i] {
			continue
		}
		g, slots, err := r.recheckSlots(req)
		if err != nil {
			return err
		}
		groups = append(groups, group{i, g})
		ops = append(ops, readOp{path: g.base + "/ids", list: true}, readOp{path: g.base + "/owners", list: true})
		gets.offsets(g, slots)
	}
	nLists := len(ops)
	ops = append(ops, gets.ops...)
	res, err := r.readOps(ctx, ops)
	if err != nil {
		return err
	}
	if err := gets.fill(res[nLists:]); err != nil {
		return err
	}
	var dirs []string
	var owned []*groupRead
	var topics []string
	for k, gr := range groups {
		g := gr.g
		ids, err := listed(g.verb, g.group, g.base+"/ids", res[2*k].children, res[2*k].err)
		if err != nil {
			return err
		}
		ownersDir := g.base + "/owners"
		owners, err := listed(g.verb, g.group, ownersDir, res[2*k+1].children, res[2*k+1].err)
		if err != nil {
			return err
		}
		g.liveList("ids", ids)
		g.liveList("owners", owners)
		for _, t := range owners.names {
			dirs, owned, topics = append(dirs, ownersDir+"/"+t), append(owned, g), append(topics, t)
		}
	}
	if len(dirs) > 0 {
		if err := r.readOwnersMulti(ctx, dirs, owned, topics); err != nil {
			return err
		}
	}
	for _, gr := range groups {
		out[gr.i] = gr.g.result()
	}
	return nil
}

// readOwnersMulti lists the owners/<topic> directories dirs (of the groups owned, topic by
// topic) and reads their registrations.
func (r *Reader) readOwnersMulti(ctx context.Context, dirs []string, owned []*groupRead, topics []string) error {
	ops := make([]readOp, len(dirs))
	for i, d := range dirs {
		ops[i] = readOp{path: d, list: true}
	}
	res, err := r.readOps(ctx, ops)
	if err != nil {
		return err
	}
	var gets getList
	for i, d := range dirs {
		g := owned[i]
		l, err := listed(g.verb, g.group, d, res[i].children, res[i].err)
		if err != nil {
			return err
		}
		g.liveList("owners/"+topics[i], l)
		gets.owners(g, d, topics[i], l.names)
	}
	return r.runGets(ctx, gets)
}

// lists lists paths of one group, in multiRead batches.
func (r *Reader) lists(ctx context.Context, g *groupRead, paths []string) ([]listing, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	ops := make([]readOp, len(paths))
	for i, p := range paths {
		ops[i] = readOp{path: p, list: true}
	}
	res, err := r.readOps(ctx, ops)
	if err != nil {
		return nil, err
	}
	out := make([]listing, len(paths))
	for i, p := range paths {
		if out[i], err = listed(g.verb, g.group, p, res[i].children, res[i].err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// getList gathers Gets and what each answer fills.
type getList struct {
	ops  []readOp
	dest []func(opResult) error
}

// offsets adds the Get of each slot, filled as getOffset fills it.
func (l *getList) offsets(g *groupRead, slots []offsetSlot) {
	for j := range slots {
		s := &slots[j]
		l.ops = append(l.ops, readOp{path: s.Path})
		l.dest = append(l.dest, func(res opResult) error { return g.gotOffset(s, res.data, res.stat(), res.err) })
	}
}

// owners adds the Get of each owners/<topic>/<partition> registration listed under dir.
func (l *getList) owners(g *groupRead, dir, topic string, parts []string) {
	for _, p := range parts {
		path, entry := dir+"/"+p, "owners/"+topic+"/"+p
		l.ops = append(l.ops, readOp{path: path})
		l.dest = append(l.dest, func(res opResult) error { return g.gotOwner(path, entry, res.data, res.err) })
	}
}

// fill hands each result to its destination; the first error (a failure other than NoNode or
// NoAuth) is returned.
func (l *getList) fill(res []opResult) error {
	for i, f := range l.dest {
		if err := f(res[i]); err != nil {
			return err
		}
	}
	return nil
}

// runGets reads the list's Gets and fills their destinations.
func (r *Reader) runGets(ctx context.Context, l getList) error {
	if len(l.ops) == 0 {
		return nil
	}
	res, err := r.readOps(ctx, l.ops)
	if err != nil {
		return err
	}
	return l.fill(res)
}
