package zkreader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// WriteOffsets writes offsets of group into /consumers/<group>/offsets/<topic>/<partition> as
// the Scala consumer did (ZkUtils.updatePersistentPath): persistent znodes, open ACL, data the
// decimal offset, missing parents created. Writes are pipelined over the pool. It is for
// seeding, tests and restore (dual-commit's rollback writes through AdvanceOffsets); an error names the first znode that failed, and other
// znodes of the same call may or may not have been written.
func (r *Reader) WriteOffsets(ctx context.Context, group string, offsets map[migrate.TopicPartition]int64) error {
	dir, tps, err := r.prepareOffsetWrites(ctx, "write", group, offsets)
	if err != nil {
		return err
	}
	return r.fanOut(ctx, len(tps), func(c *zk.Conn, i int) error {
		tp := tps[i]
		p := fmt.Sprintf("%s/%s/%d", dir, tp.Topic, tp.Partition)
		if err := upsert(c, p, []byte(strconv.FormatInt(offsets[tp], 10))); err != nil {
			return fmt.Errorf("write offset of group %q %s: %w", group, tp, err)
		}
		return nil
	})
}

// prepareOffsetWrites checks the names and values of a write of offsets into group (verb names
// the write in errors) and creates the missing topic folders under its offsets folder. It
// returns that folder and the partitions, in the map's order, for the per-znode writes.
func (r *Reader) prepareOffsetWrites(ctx context.Context, verb, group string, offsets map[migrate.TopicPartition]int64) (string, []migrate.TopicPartition, error) {
	if err := ValidateName(group); err != nil {
		return "", nil, fmt.Errorf("%s offsets of group %q: %w", verb, group, err)
	}
	topics := map[string]bool{}
	var tps []migrate.TopicPartition
	for tp, off := range offsets {
		if err := ValidateName(tp.Topic); err != nil {
			return "", nil, fmt.Errorf("%s offsets of group %q: topic: %w", verb, group, err)
		}
		if tp.Partition < 0 || off < 0 {
			return "", nil, fmt.Errorf("%s offset %d of group %q %s: partition and offset must not be negative", verb, off, group, tp)
		}
		topics[tp.Topic] = true
		tps = append(tps, tp)
	}
	dir := r.path("/consumers/" + group + "/offsets")
	var dirs []string
	for t := range topics {
		dirs = append(dirs, dir+"/"+t)
	}
	if err := r.fanOut(ctx, len(dirs), func(c *zk.Conn, i int) error {
		return ensurePath(c, dirs[i])
	}); err != nil {
		return "", nil, fmt.Errorf("%s offsets of group %q: %w", verb, group, err)
	}
	return dir, tps, nil
}

// upsert sets p's data, creating p when missing (its parent must exist).
func upsert(c *zk.Conn, p string, data []byte) error {
	for range 3 {
		_, err := c.Set(p, data, -1)
		if !errors.Is(err, zk.ErrNoNode) {
			return wrapPath(p, err)
		}
		_, err = c.Create(p, data, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
		if !errors.Is(err, zk.ErrNodeExists) {
			return wrapPath(p, err)
		}
		// Created by someone else between our Set and Create: set it again.
	}
	return fmt.Errorf("znode %s: created and deleted concurrently, giving up", p)
}

// ensurePath creates p and its missing ancestors as empty persistent znodes.
func ensurePath(c *zk.Conn, p string) error {
	if p == "/" {
		return nil
	}
	_, err := c.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll))
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		if err := ensurePath(c, path.Dir(p)); err != nil {
			return err
		}
		return ensurePath(c, p)
	}
	return wrapPath(p, err)
}

func wrapPath(p string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("znode %s: %w", p, err)
}

// consumerRegistration is the /consumers/<g>/ids/<id> JSON the Scala high-level consumer wrote
// (ZookeeperConsumerConnector.registerConsumerInZK); the field order is the same.
type consumerRegistration struct {
	Version      int            `json:"version"`
	Subscription map[string]int `json:"subscription"`
	Pattern      string         `json:"pattern"`
	Timestamp    string         `json:"timestamp"`
}

// RegisterLiveConsumer makes group look like it has a running legacy consumer: an ephemeral
// /consumers/<group>/ids/<consumerID> and, for each owned partition, an ephemeral
// /owners/<topic>/<partition> holding "<consumerID>-0" (thread 0). The ephemerals live in one
// session of the pool and vanish with it (Close, expiry) or when cleanup deletes them.
func (r *Reader) RegisterLiveConsumer(ctx context.Context, group, consumerID string, owned []migrate.TopicPartition) (cleanup func() error, err error) {
	if err := ValidateName(group); err != nil {
		return nil, fmt.Errorf("register consumer in group %q: %w", group, err)
	}
	if err := ValidateName(consumerID); err != nil {
		return nil, fmt.Errorf("register consumer %q in group %q: %w", consumerID, group, err)
	}
	reg := consumerRegistration{Version: 1, Subscription: map[string]int{}, Pattern: "static",
		Timestamp: strconv.FormatInt(time.Now().UnixMilli(), 10)}
	for _, tp := range owned {
		if err := ValidateName(tp.Topic); err != nil {
			return nil, fmt.Errorf("register consumer %q in group %q: topic: %w", consumerID, group, err)
		}
		reg.Subscription[tp.Topic] = 1
	}
	data, err := json.Marshal(reg)
	if err != nil {
		return nil, fmt.Errorf("register consumer %q in group %q: %w", consumerID, group, err)
	}
	base := r.path("/consumers/" + group)
	nodes := []string{base + "/ids/" + consumerID}
	values := [][]byte{data}
	for _, tp := range owned {
		nodes = append(nodes, fmt.Sprintf("%s/owners/%s/%d", base, tp.Topic, tp.Partition))
		values = append(values, []byte(consumerID+"-0"))
	}
	// One connection for all: ephemerals belong to the session that created them.
	c := r.conn()
	var created []string
	cleanup = func() error {
		var errs []error
		for _, p := range slices.Backward(created) {
			if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				errs = append(errs, wrapPath(p, err))
			}
		}
		return errors.Join(errs...)
	}
	for i, p := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(err, cleanup())
		}
		if err := ensurePath(c, path.Dir(p)); err != nil {
			return nil, errors.Join(fmt.Errorf("register consumer %q in group %q: %w", consumerID, group, err), cleanup())
		}
		if _, err := c.Create(p, values[i], zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			return nil, errors.Join(fmt.Errorf("register consumer %q in group %q: %w", consumerID, group, wrapPath(p, err)), cleanup())
		}
		created = append(created, p)
	}
	return cleanup, nil
}
