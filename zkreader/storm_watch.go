package zkreader

import (
	"context"
	"strings"

	"github.com/go-zookeeper/zk"
)

// OpenStormWatcher opens a Watcher (as OpenWatcher) of the storm-kafka spout l instead of
// /consumers: the group list is the children of l.Root (the spout's folder coming or going),
// and the group l.Group is the spout's folder, each wildcard topic folder in it, and a data
// watch on each partition_<N> znode (ZkState.writeJSON updates them in place).
func OpenStormWatcher(ctx context.Context, cfg Config, l StormLayout) (*Watcher, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	w, err := openWatcher(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	w.storm = &l
	// The Storm layout keeps its one-shot watches on every version: a recursive watch on its
	// root would see every spout's znodes, and its event mapping has not been written yet.
	w.persistent.Store(false)
	return w, nil
}

// listPath is the znode whose children are the groups.
func (w *Watcher) listPath() string {
	if w.storm != nil {
		return w.r.path(w.storm.Root)
	}
	return w.r.path("/consumers")
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
