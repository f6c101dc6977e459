package zkreader

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Arming: which watch each znode of a group needs, set once and set again when it fires.

// groupOf is the watched group a znode path belongs to, or "".
func (run *watchRun) groupOf(p string) string {
	if run.w.storm != nil {
		return run.stormGroupOf(p)
	}
	rel, ok := strings.CutPrefix(p, run.w.r.path("/consumers/"))
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rel, "/")
	if !run.groups[g] {
		return ""
	}
	return g
}

func (w *Watcher) clearArmed() {
	w.armedMu.Lock()
	clear(w.armed)
	w.armedMu.Unlock()
}

func (w *Watcher) fired(ev zk.Event) {
	w.armedMu.Lock()
	defer w.armedMu.Unlock()
	for _, k := range firedKinds(ev.Type) {
		delete(w.armed, watchKey{ev.Path, k})
	}
}

// armList sets the watch on the list of groups (/consumers; an exists watch while it is
// missing). On the fast path it is the persistent recursive watch, which sees every group too.
func (run *watchRun) armList(ctx context.Context) error {
	if run.w.persistent.Load() {
		return run.w.addWatch(ctx)
	}
	p := run.w.listPath()
	return run.w.r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		_, err := run.armDir(c, p)
		return err
	})
}

// armGroups sets every missing watch of the groups, level by level, pipelined: the offsets,
// ids and owners directories, each topic directory below them, each offset znode.
func (run *watchRun) armGroups(ctx context.Context, groups []string) error {
	if run.w.persistent.Load() {
		return nil // the recursive watch on the list sees them
	}
	if run.w.storm != nil {
		return run.armPaths(ctx, run.stormRoots(groups))
	}
	var level []string
	for _, g := range groups {
		base := run.w.r.path("/consumers/" + g)
		level = append(level, base+"/offsets", base+"/ids", base+"/owners")
	}
	return run.armPaths(ctx, level)
}

// armPaths arms the paths and, below each directory, the children not armed yet.
func (run *watchRun) armPaths(ctx context.Context, level []string) error {
	for len(level) > 0 {
		var (
			mu   sync.Mutex
			next []string
		)
		err := run.w.r.fanOut(ctx, len(level), func(c *zk.Conn, i int) error {
			kids, err := run.arm(c, level[i])
			mu.Lock()
			next = append(next, kids...)
			mu.Unlock()
			return err
		})
		if err != nil {
			return err
		}
		level = next
	}
	return nil
}

// arm sets the watch a path needs, unless already armed, and returns the children to arm.
// Directories get a children watch (an exists watch while missing); offset znodes a data watch;
// registrations under ids/ and owners/<t>/ need none (their directories' watches see them come
// and go).
func (run *watchRun) arm(c *zk.Conn, p string) ([]string, error) {
	if run.w.storm != nil {
		return run.stormArm(c, p)
	}
	g := run.groupOf(p)
	rel := strings.TrimPrefix(p, run.w.r.path("/consumers/"+g))
	depth := strings.Count(rel, "/")
	isDir := depth == 1 || (depth == 2 && !strings.HasPrefix(rel, "/ids/"))
	switch {
	case isDir:
		names, err := run.armDir(c, p)
		if err != nil || names == nil {
			return nil, err
		}
		if depth == 2 && strings.HasPrefix(rel, "/owners/") {
			return nil, nil
		}
		kids := make([]string, 0, len(names))
		for _, n := range names {
			if depth == 1 && strings.HasPrefix(rel, "/ids") {
				continue
			}
			kids = append(kids, p+"/"+n)
		}
		return kids, nil
	case depth == 3 && strings.HasPrefix(rel, "/offsets/"):
		return nil, run.armData(c, p)
	}
	return nil, nil
}

// armData sets the data watch of an offset znode, unless already armed.
func (run *watchRun) armData(c *zk.Conn, p string) error {
	if run.isArmed(p, watchData) {
		return nil
	}
	_, _, _, err := c.GetW(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // deleted: the directory's watch sees it come back
	}
	if errors.Is(err, zk.ErrNoAuth) {
		run.deniedWatch(p)
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch %s: %w", p, err)
	}
	run.setArmed(p, watchData)
	return nil
}

// armDir sets a directory's children watch (an exists watch while it is missing) and returns
// its children, nil when there are none to arm below it. A directory still watched is listed
// without a watch: an arming cut short (a lost connection, an error) may have set its watch and
// not yet its children's, and only the missing ones are set again.
func (run *watchRun) armDir(c *zk.Conn, p string) ([]string, error) {
	if run.isArmed(p, watchChildren) {
		names, _, err := c.Children(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil, nil // deleted: the watch held fires
		case errors.Is(err, zk.ErrNoAuth):
			run.deniedWatch(p)
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		return names, nil
	}
	names, _, _, err := c.ChildrenW(p)
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		run.deniedWatch(p)
		return nil, nil
	case errors.Is(err, zk.ErrNoNode):
		if run.isArmed(p, watchExists) {
			return nil, nil
		}
		ok, _, _, err := c.ExistsW(p)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", p, err)
		}
		run.setArmed(p, watchExists)
		if ok { // created in between: watch its children instead
			return run.armDir(c, p)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("watch %s: %w", p, err)
	}
	run.setArmed(p, watchChildren)
	return names, nil
}

func (run *watchRun) isArmed(p string, k watchKind) bool {
	run.w.armedMu.Lock()
	defer run.w.armedMu.Unlock()
	return run.w.armed[watchKey{p, k}]
}

func (run *watchRun) setArmed(p string, k watchKind) {
	run.w.set.Add(1)
	run.w.armedMu.Lock()
	defer run.w.armedMu.Unlock()
	run.w.armed[watchKey{p, k}] = true
}

// deniedWatch notes a znode the ACLs keep us from reading, so from watching: nothing is set
// there and the other znodes are watched as usual. Failing the arming instead retried it every
// 500 ms for good, and no group's change was reported until the next resync. The mirror's
// read reports the znode (invalid, or liveness unknown), and the resync reads it again.
func (run *watchRun) deniedWatch(p string) {
	run.w.armedMu.Lock()
	first := !run.w.denied[p]
	run.w.denied[p] = true
	run.w.armedMu.Unlock()
	if first {
		run.w.r.log.Warn("znode not readable (ACL): its changes are not watched, only read at each resync", "znode", p)
	}
}
