package zkreader

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// advanceAttempts bounds how often one znode is read and compared again after a concurrent
// change beat our conditional write. Each retry means another writer's set succeeded just now;
// a legacy consumer only moves forward, so the comparison usually ends it at the next read. The
// bound only guarantees an end (an error naming the znode) against a writer that never stops.
const advanceAttempts = 64

// AdvanceOffsets moves offset znodes of group forward, each atomically: the znode is read, and
// set only when it holds a valid offset below the new one, with a set conditional on the version
// just read, so a legacy consumer's commit that lands between the read and the set is never
// overwritten (the set fails with a bad version, and the znode is read and compared again). A
// missing znode is created (a partition only Kafka has), but never a missing group. The partitions left alone are returned
// with why: ZooKeeper already at or above, or data that is not an offset. It is the rollback
// write of `dual-commit --reverse` (migrate.LegacyOffsetWriter); an error names the first znode
// that failed, and other znodes of the same call may or may not have been written.
func (r *Reader) AdvanceOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) (map[migrate.TopicPartition]string, error) {
	if gone, err := r.groupGone(ctx, group); err != nil || gone {
		if err != nil {
			return nil, fmt.Errorf("advance offsets of group %q: %w", group, err)
		}
		left := make(map[migrate.TopicPartition]string, len(offsets))
		for tp := range offsets {
			left[tp] = "the group was deleted from ZooKeeper: it is not created again"
		}
		return left, nil
	}
	dir, tps, err := r.prepareOffsetWrites(ctx, "advance", group, offsets)
	if err != nil {
		return nil, err
	}
	why := make([]string, len(tps)) // one slot per partition: fanOut calls run concurrently
	err = r.fanOut(ctx, len(tps), func(c *zk.Conn, i int) error {
		tp := tps[i]
		p := fmt.Sprintf("%s/%s/%d", dir, tp.Topic, tp.Partition)
		reason, err := advance(c, p, offsets[tp])
		if err != nil {
			return fmt.Errorf("advance offset of group %q %s to %d: %w", group, tp, offsets[tp], err)
		}
		why[i] = reason
		return nil
	})
	if err != nil {
		return nil, err
	}
	left := map[migrate.TopicPartition]string{}
	for i, w := range why {
		if w != "" {
			left[tps[i]] = w
		}
	}
	return left, nil
}

// groupGone says whether /consumers/<group> is missing. A group deleted from ZooKeeper stays
// deleted: the reverse mirror writes into groups that exist, never brings one back. The offsets
// folder is created here with a plain create, which ZooKeeper refuses when its parent (the group)
// is missing, so the check and the folder are one step.
func (r *Reader) groupGone(ctx context.Context, group string) (bool, error) {
	if err := ValidateName(group); err != nil {
		return false, err
	}
	p := r.path("/consumers/" + group + "/offsets")
	gone := false
	err := r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		_, err := c.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			gone = true
			return nil
		case err == nil, errors.Is(err, zk.ErrNodeExists):
			return nil
		}
		return wrapPath(p, err)
	})
	return gone, err
}

// advance sets znode p to offset to if it is missing or holds a valid smaller offset, and
// returns "" when it wrote, or why it did not.
func advance(c *zk.Conn, p string, to int64) (string, error) {
	data := []byte(strconv.FormatInt(to, 10))
	for range advanceAttempts {
		cur, stat, err := c.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			_, err = c.Create(p, data, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrNodeExists) {
				continue // created by someone else just now: compare with theirs
			}
			return "", wrapPath(p, err)
		}
		if err != nil {
			return "", wrapPath(p, err)
		}
		v, perr := ParseOffset(cur)
		if perr != nil {
			return fmt.Sprintf("znode %s: %v", p, perr), nil
		}
		if v >= to {
			return fmt.Sprintf("zookeeper already at %d", v), nil
		}
		_, err = c.Set(p, data, stat.Version)
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
			continue // changed or deleted since the read: read and compare again
		}
		return "", wrapPath(p, err)
	}
	return "", fmt.Errorf("znode %s: changed by another writer on each of %d attempts, giving up", p, advanceAttempts)
}
