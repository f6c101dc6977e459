package mm2log

import (
	"context"
	"errors"
	"maps"

	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// CheckpointsTopic is the topic MirrorMaker 2 writes the checkpoints of the replication from
// sourceAlias to, on the target cluster, under replication.policy.separator sep (since KIP-690,
// as the offset-syncs topic).
func CheckpointsTopic(sourceAlias, sep string) string {
	return sourceAlias + sep + "checkpoints" + sep + "internal"
}

// CheckpointKey names a group's checkpoint of one partition, by the target's topic name (as
// MirrorMaker 2 writes it).
type CheckpointKey struct {
	Group string
	TP    migrate.TopicPartition
}

// Checkpoints is what a read of a checkpoints topic found: each group's latest checkpoint of
// each partition (the topic is compacted by that key).
type Checkpoints struct {
	Topic   string
	Latest  map[CheckpointKey]mm2.Checkpoint
	Records int64
	// End is each partition's high watermark when the latest read began.
	End map[int32]int64
}

// ReadCheckpoints returns prev with the checkpoints written to its topic since prev was read
// (all of them when prev was never read); prev is not changed. A record that does not decode
// fails the read, naming its offset. A topic that changed other than by growing is read whole
// again. ErrNoTopic means the target has no such topic: MirrorMaker 2 runs without
// emit.checkpoints.enabled, or the source alias is not the one named.
func (r *Reader) ReadCheckpoints(ctx context.Context, prev Checkpoints) (Checkpoints, error) {
	out := Checkpoints{Topic: prev.Topic, Latest: maps.Clone(prev.Latest), Records: prev.Records}
	if out.Latest == nil {
		out.Latest = map[CheckpointKey]mm2.Checkpoint{}
	}
	add := func(rec logbatch.Record) error {
		c, err := mm2.DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil {
			return err
		}
		out.Latest[CheckpointKey{Group: c.Group, TP: migrate.TopicPartition{Topic: c.Topic, Partition: c.Partition}}] = c
		return nil
	}
	_, end, n, err := r.scan(ctx, prev.Topic, prev.End, add)
	if errors.Is(err, errReadAgain) {
		r.log.Info("reading MirrorMaker 2's checkpoints whole again", "topic", prev.Topic, "why", err)
		return r.ReadCheckpoints(ctx, Checkpoints{Topic: prev.Topic})
	}
	if err != nil {
		return Checkpoints{}, err
	}
	out.End, out.Records = end, out.Records+n.records
	return out, nil
}
