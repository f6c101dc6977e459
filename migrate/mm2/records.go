package mm2

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// OffsetSync is one record of MirrorMaker 2's offset-syncs topic
// (mm2-offset-syncs.<target>.internal): the record at Upstream in the source partition was
// written at Downstream in the target's replica of it.
type OffsetSync struct {
	Topic      string // the source topic, as named in the source cluster
	Partition  int32
	Upstream   int64
	Downstream int64
}

// Checkpoint is one record of MirrorMaker 2's checkpoints topic (<source>.checkpoints.internal
// on the target): group's committed offset Upstream in the source, translated to Downstream.
// Topic names the target's topic (the replication policy's name for the source topic).
type Checkpoint struct {
	Group      string
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// errShort is wrapped by a decode error of a record cut short.
var errShort = errors.New("record cut short")

// DecodeOffsetSync decodes an offset-syncs record: its key is the source topic (a string of
// Kafka's protocol: int16 length, bytes) and partition (int32), its value the upstream and
// downstream offsets (two int64). Anything left over is an error: a record of another format.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	var s OffsetSync
	k := reader{b: key}
	s.Topic = k.str()
	s.Partition = k.int32()
	v := reader{b: value}
	s.Upstream = v.int64()
	s.Downstream = v.int64()
	if err := errors.Join(k.done("key"), v.done("value")); err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync: %w", err)
	}
	if s.Upstream < 0 || s.Downstream < 0 {
		return OffsetSync{}, fmt.Errorf("offset sync of %s-%d: negative offset (upstream %d, downstream %d)", s.Topic, s.Partition, s.Upstream, s.Downstream)
	}
	return s, nil
}

// DecodeCheckpoint decodes a checkpoints record: key group, topic (strings) and partition
// (int32); value a version (int16, 0 is the only one), the upstream and downstream offsets
// (int64) and the metadata (string).
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	var c Checkpoint
	k := reader{b: key}
	c.Group = k.str()
	c.Topic = k.str()
	c.Partition = k.int32()
	v := reader{b: value}
	if version := v.int16(); v.err == nil && version != 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: value version %d, only 0 is known", version)
	}
	c.Upstream = v.int64()
	c.Downstream = v.int64()
	c.Metadata = v.str()
	if err := errors.Join(k.done("key"), v.done("value")); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return c, nil
}

// reader reads Kafka protocol primitives, keeping the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("%w: %d bytes wanted, %d left", errShort, n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) str() string {
	n := r.int16()
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("null string where a string is required")
		return ""
	}
	return string(r.take(int(n)))
}

// done reports the first error, or bytes left over.
func (r *reader) done(what string) error {
	switch {
	case r.err != nil:
		return fmt.Errorf("%s: %w", what, r.err)
	case len(r.b) > 0:
		return fmt.Errorf("%s: %d bytes left over", what, len(r.b))
	}
	return nil
}
