package zkreader

import (
	"context"
	"strings"

	"github.com/go-zookeeper/zk"
)

// OpenStormWatcher opens a Watcher (as OpenWatcher) of the storm-kafka spout l instead of
// /consumers: the group list is the children of l.Root (the spout's folder coming or going),
// and the group l.Group is the spout's folder, each wildcard topic folder in it, and a data
// watch on each partition_<N> znode (ZkState.writeJSON updates them in place). On ZooKeeper
// 3.6+ one persistent recursive watch on the spout's folder stands for all of them
// (stormTarget).
func OpenStormWatcher(ctx context.Context, cfg Config, l StormLayout) (*Watcher, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	w, err := openWatcher(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	w.storm = &l
	return w, nil
}

// stormTarget maps an event of the recursive watch on the spout's folder (recursivePath: not
// on the Storm root, which may hold every topology's spouts, each committing every few
// seconds) to what the one-shot watches report for it (stormArm): list and group, the folder
// created or deleted (the list of groups is that folder alone); group, a wildcard topic folder
// in it coming or going, or a partition_<N> znode in either created, set or deleted.
func (run *watchRun) stormTarget(ev zk.Event) (list bool, group string) {
	comesOrGoes := ev.Type == zk.EventNodeCreated || ev.Type == zk.EventNodeDeleted
	dir := run.w.r.path(run.w.storm.dir())
	if ev.Path == dir {
		list = comesOrGoes
	}
	g := run.stormGroupOf(ev.Path)
	if g == "" {
		return list, ""
	}
	inDir := strings.TrimPrefix(strings.TrimPrefix(ev.Path, dir), "/")
	depth := 0
	if inDir != "" {
		depth = 1 + strings.Count(inDir, "/")
	}
	_, err := ParseStormPartition(inDir[strings.LastIndexByte(inDir, '/')+1:])
	switch {
	case depth > 0 && depth <= 2 && err == nil:
		return list, g // a partition znode: its data watch sees it set too
	case depth <= 1 && comesOrGoes:
		return list, g // the spout's folder, or a wildcard topic folder
	}
	return list, ""
}

// recursivePath is where the fast path's one recursive watch is set: /consumers, or the
// spout's folder.
func (w *Watcher) recursivePath() string {
	if w.storm != nil {
		return w.r.path(w.storm.dir())
	}
	return w.listPath()
}

// listPath is the znode whose children are the groups.
func (w *Watcher) listPath() string {
	switch {
	case w.storm == nil:
		return w.r.path("/consumers")
	case w.storm.Root == "/" && w.r.chroot != "":
		return w.r.chroot // not chroot + "/": ZooKeeper refuses a path ending in a slash
	}
	return w.r.path(w.storm.Root)
}

// stormGroupOf is the spout's group for a path in the spout's folder, when it is watched.
func (run *watchRun) stormGroupOf(p string) string {
	dir := run.w.r.path(run.w.storm.dir())
	if (p == dir || strings.HasPrefix(p, dir+"/")) && run.groups[run.w.storm.Group] {
		return run.w.storm.Group
	}
	return ""
}

// stormRoots is the spout's folder when the selection has its group.
func (run *watchRun) stormRoots(groups []string) []string {
	for _, g := range groups {
		if g == run.w.storm.Group {
			return []string{run.w.r.path(run.w.storm.dir())}
		}
	}
	return nil
}

// stormArm arms one path of the spout's folder: the folder and each wildcard topic folder get a
// children watch (an exists watch while missing), each partition_<N> znode a data watch.
func (run *watchRun) stormArm(c *zk.Conn, p string) ([]string, error) {
	dir := run.w.r.path(run.w.storm.dir())
	rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
	depth := 0
	if rel != "" {
		depth = 1 + strings.Count(rel, "/")
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	if _, err := ParseStormPartition(name); depth > 0 && err == nil {
		return nil, run.armData(c, p)
	}
	if depth > 1 {
		return nil, nil // not a partition znode of a topic folder: nothing reads it
	}
	names, err := run.armDir(c, p)
	if err != nil || names == nil {
		return nil, err
	}
	kids := make([]string, 0, len(names))
	for _, n := range names {
		kids = append(kids, p+"/"+n)
	}
	return kids, nil
}
