package zkreader

import (
	"context"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The reads of ZooKeeper 3.6+ (the fast path), in multiRead batches: the same outcomes as
// readGroup and recheckGroup, which stay the path of older servers, and share with them every
// rule that turns an answer into a result (listed, gotOffset, gotOwner).

// multiWave is the most groups read together on the multiRead path: their listings and Gets
// share batches, so a wave costs ZooKeeper about three requests plus one per 100 znodes, where
// a group alone cost three. A wave holds up to min(32, GroupsInFlight/8) groups and
// GroupsInFlight/wave waves run at once (8 at the defaults), which keeps the pipeline full.
const multiWave = 32

// groupWave is one group of a wave: its read and the listings of its three folders.
type groupWave struct {
	g   *groupRead
	top []listing // offsets/, ids/, owners/
	// dirs lists the group's topic folders (nTopics of them), then its owners/<topic> ones.
	dirs    []string
	nTopics int
}

// readGroupsMulti reads groups as readGroup reads one, in three rounds shared by all of them:
// each group's offsets/, ids/ and owners/ listings; the listings of their topics; the Gets of
// every partition and owner znode found, in batches of batchOps.
func (r *Reader) readGroupsMulti(ctx context.Context, groups []string) ([]migrate.LegacyGroup, error) {
	ws := make([]groupWave, len(groups))
	var ops []readOp
	for i, group := range groups {
		g := &groupRead{verb: "read", group: group, base: r.path("/consumers/" + group)}
		ws[i].g = g
		ops = appendLists(ops, folders(g)...)
	}
	res, err := r.readOps(ctx, ops)
	if err != nil {
		return nil, err
	}
	ops = ops[:0]
	for i := range ws {
		w := &ws[i]
		if w.top, err = w.g.listings(res[3*i:3*i+3], folders(w.g)); err != nil {
			return nil, err
		}
		w.layOut()
		ops = appendLists(ops, w.dirs...)
	}
	if res, err = r.readOps(ctx, ops); err != nil {
		return nil, err
	}
	var gets getList
	for i := range ws {
		w := &ws[i]
		sub, err := w.g.listings(res[:len(w.dirs)], w.dirs)
		if err != nil {
			return nil, err
		}
		res = res[len(w.dirs):]
		w.fill(&gets, sub)
	}
	if err := r.runGets(ctx, gets); err != nil {
		return nil, err
	}
	out := make([]migrate.LegacyGroup, len(ws))
	for i, w := range ws {
		out[i] = w.g.result()
	}
	return out, nil
}

// folders is the paths of a group's first round, in its order.
func folders(g *groupRead) []string {
	return []string{g.base + "/offsets", g.base + "/ids", g.base + "/owners"}
}

// layOut records the group's liveness listings and the folders its second round lists.
func (w *groupWave) layOut() {
	g, offsets, owners := w.g, w.g.base+"/offsets", w.g.base+"/owners"
	g.liveList("ids", w.top[1])
	g.liveList("owners", w.top[2])
	if w.top[0].denied {
		g.topics = []topicRead{{denied: deniedDir(offsets, "")}}
	} else {
		g.topics = make([]topicRead, len(w.top[0].names))
		for _, t := range w.top[0].names {
			w.dirs = append(w.dirs, offsets+"/"+t)
		}
	}
	w.nTopics = len(w.dirs)
	for _, t := range w.top[2].names {
		w.dirs = append(w.dirs, owners+"/"+t)
	}
}

// fill lays out the slots of the group's topics from their listings sub and adds the Gets of
// its partition and owner znodes.
func (w *groupWave) fill(gets *getList, sub []listing) {
	g := w.g
	for i := range w.nTopics {
		tr, t := &g.topics[i], w.top[0].names[i]
		if sub[i].denied {
			tr.denied = deniedDir(w.dirs[i], t)
			continue
		}
		tr.slots = offsetSlots(w.dirs[i], t, sub[i].names)
		gets.offsets(g, tr.slots)
	}
	for k, t := range w.top[2].names {
		g.liveList("owners/"+t, sub[w.nTopics+k])
		gets.owners(g, w.dirs[w.nTopics+k], t, sub[w.nTopics+k].names)
	}
}

// appendLists appends a getChildren of each path.
func appendLists(ops []readOp, paths ...string) []readOp {
	for _, p := range paths {
		ops = append(ops, readOp{path: p, list: true})
	}
	return ops
}

// listings sorts the answers to the listings of paths, as listChildren does.
func (g *groupRead) listings(res []opResult, paths []string) ([]listing, error) {
	out := make([]listing, len(paths))
	for i, p := range paths {
		var err error
		if out[i], err = listed(g.verb, g.group, p, res[i].children, res[i].err); err != nil {
			return nil, err
		}
	}
	return out, nil
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
