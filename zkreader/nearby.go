package zkreader

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// maxNearby bounds how many children of the chroot NearbyRoots looks into: it runs only to
// explain an empty selection, and a chroot with thousands of children is not a Kafka chroot.
const maxNearby = 256

var _ migrate.LegacyRoots = (*Reader)(nil)

// GroupsRoot is the folder ListGroups lists: "<chroot>/consumers".
func (r *Reader) GroupsRoot() string { return r.path("/consumers") }

// NearbyRoots returns the group folders one chroot level off that hold at least one group:
// <chroot>/<child>/consumers for each child of the chroot (the legacy consumers of a
// ZooKeeper-mode cluster commit under the brokers' chroot, e.g. /kafka/consumers, and --zk without
// it lists /consumers) and, under a chroot, <parent>/consumers (a chroot one level too deep). Each
// comes with the connect string that reads it. One listing and one Exists per candidate; the
// group counts are the folders' child counts, not a listing.
func (r *Reader) NearbyRoots(ctx context.Context) ([]migrate.NearbyRoot, error) {
	base := r.chroot // "" at the root
	var candidates []string
	if base != "" {
		parent := path.Dir(base)
		if parent == "/" {
			parent = ""
		}
		candidates = append(candidates, parent)
	}
	listed := base
	if listed == "" {
		listed = "/"
	}
	children, _, err := r.conn().Children(listed)
	if err != nil {
		return nil, fmt.Errorf("list %s for group folders one level down: %w", listed, err)
	}
	slices.Sort(children)
	for _, c := range children {
		if c == "consumers" || (base == "" && c == "zookeeper") {
			continue // the folder already looked under; ZooKeeper's own
		}
		if len(candidates) == maxNearby {
			break
		}
		candidates = append(candidates, base+"/"+c)
	}
	found := make([]*migrate.NearbyRoot, len(candidates))
	err = r.fanOut(ctx, len(candidates), func(c *zk.Conn, i int) error {
		root := candidates[i] + "/consumers"
		ok, st, err := c.Exists(root)
		switch {
		case errors.Is(err, zk.ErrNoAuth):
			return nil
		case err != nil:
			return fmt.Errorf("look for %s: %w", root, err)
		case ok && st.NumChildren > 0:
			found[i] = &migrate.NearbyRoot{Root: root, Connect: strings.Join(r.hosts, ",") + candidates[i], Groups: int(st.NumChildren)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []migrate.NearbyRoot
	for _, f := range found {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}
