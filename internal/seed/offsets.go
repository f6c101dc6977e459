package seed

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// Paths builds the znode paths of the legacy layout under an optional chroot.
type Paths struct{ Chroot string }

// Consumers is the /consumers root.
func (p Paths) Consumers() string { return p.Chroot + "/consumers" }

// Group is /consumers/<g>.
func (p Paths) Group(g string) string { return p.Consumers() + "/" + g }

// OffsetsDir is /consumers/<g>/offsets/<t>.
func (p Paths) OffsetsDir(g, t string) string { return p.Group(g) + "/offsets/" + t }

// Offset is /consumers/<g>/offsets/<t>/<p>.
func (p Paths) Offset(g, t string, part int32) string {
	return p.OffsetsDir(g, t) + "/" + strconv.Itoa(int(part))
}

// ID is /consumers/<g>/ids/<id>.
func (p Paths) ID(g, id string) string { return p.Group(g) + "/ids/" + id }

// OwnersDir is /consumers/<g>/owners/<t>.
func (p Paths) OwnersDir(g, t string) string { return p.Group(g) + "/owners/" + t }

// Owner is /consumers/<g>/owners/<t>/<p>.
func (p Paths) Owner(g, t string, part int32) string {
	return p.OwnersDir(g, t) + "/" + strconv.Itoa(int(part))
}

// zkCounts is what writing the offsets did.
type zkCounts struct {
	created, overwritten atomic.Int64
}

// writeOffsets writes every offset znode of the spec, creating parents first, level by level,
// so each level is one flat pipelined phase with no ordering inside it.
func writeOffsets(ctx context.Context, log *slog.Logger, conns []*zk.Conn, inflight int, s Spec, paths Paths) (*zkCounts, error) {
	if err := ensurePath(ctx, conns[0], paths.Consumers()); err != nil {
		return nil, err
	}
	err := pipeline(ctx, log, "group znodes", conns, inflight, s.Groups, func(ctx context.Context, c *zk.Conn, g int) error {
		name := s.GroupName(g)
		if err := ensure(ctx, c, paths.Group(name)); err != nil {
			return fmt.Errorf("group %q: %w", name, err)
		}
		if err := ensure(ctx, c, paths.Group(name)+"/offsets"); err != nil {
			return fmt.Errorf("group %q: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	tpg := s.TopicsPerGroup
	err = pipeline(ctx, log, "topic znodes", conns, inflight, s.Groups*tpg, func(ctx context.Context, c *zk.Conn, i int) error {
		g, t := i/tpg, s.GroupTopic(i/tpg, i%tpg)
		if err := ensure(ctx, c, paths.OffsetsDir(s.GroupName(g), s.TopicName(t))); err != nil {
			return fmt.Errorf("group %q topic %q: %w", s.GroupName(g), s.TopicName(t), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	counts := &zkCounts{}
	parts := int(s.Partitions)
	err = pipeline(ctx, log, "offset znodes", conns, inflight, s.Offsets(), func(ctx context.Context, c *zk.Conn, i int) error {
		gt, p := i/parts, int32(i%parts)
		g, t := gt/tpg, s.GroupTopic(gt/tpg, gt%tpg)
		off := s.Offset(g, t, p)
		created, err := upsert(ctx, c, paths.Offset(s.GroupName(g), s.TopicName(t), p), []byte(strconv.FormatInt(off, 10)))
		if err != nil {
			return fmt.Errorf("group %q topic %q partition %d: %w", s.GroupName(g), s.TopicName(t), p, err)
		}
		if created {
			counts.created.Add(1)
		} else {
			counts.overwritten.Add(1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}
