package zkreader

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// MarkerName is the child of /consumers/<group> that records a finished migration (the
// cutover marker). It sits beside offsets/, ids/ and owners/, never under them: the legacy
// consumers, ListGroups and ReadGroups only look at those three, so the marker changes nothing
// for them, and writing it never touches an offset.
const MarkerName = "zk2kafka-migrated"

// maxMarkerBytes bounds the marker's data: it is a small JSON document, far below jute.maxbuffer.
const maxMarkerBytes = 64 << 10

// MarkMigrated writes the cutover marker of group: a persistent znode
// /consumers/<group>/zk2kafka-migrated holding data, created with the open ACL the legacy
// consumers used, or overwritten when a later verify marks the group again. The group must
// exist in ZooKeeper: a marker never creates a group.
func (r *Reader) MarkMigrated(ctx context.Context, group string, data []byte) error {
	if err := ValidateName(group); err != nil {
		return fmt.Errorf("mark group %q migrated: %w", group, err)
	}
	if len(data) > maxMarkerBytes {
		return fmt.Errorf("mark group %q migrated: marker of %d bytes is larger than %d", group, len(data), maxMarkerBytes)
	}
	base := r.path("/consumers/" + group)
	return r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		ok, _, err := c.Exists(base)
		if err != nil {
			return fmt.Errorf("mark group %q migrated: %w", group, wrapPath(base, err))
		}
		if !ok {
			return fmt.Errorf("mark group %q migrated: znode %s does not exist", group, base)
		}
		// upsert creates only the marker itself: if the group is deleted in between, the
		// create fails with "no node" rather than bringing the group back.
		if err := upsert(c, base+"/"+MarkerName, data); err != nil {
			return fmt.Errorf("mark group %q migrated: %w", group, err)
		}
		return nil
	})
}

// Marker returns the data of group's cutover marker, and false when the group has none.
func (r *Reader) Marker(ctx context.Context, group string) ([]byte, bool, error) {
	if err := ValidateName(group); err != nil {
		return nil, false, fmt.Errorf("read marker of group %q: %w", group, err)
	}
	p := r.path("/consumers/" + group + "/" + MarkerName)
	var (
		data  []byte
		found bool
	)
	err := r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		d, _, err := c.Get(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil
		case err != nil:
			return fmt.Errorf("read marker of group %q: %w", group, wrapPath(p, err))
		}
		data, found = d, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return data, found, nil
}
