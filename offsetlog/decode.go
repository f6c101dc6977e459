// Package offsetlog reads Kafka's offset store without asking the group coordinator: it
// consumes the internal topic __consumer_offsets and decodes the records itself, so what
// zk2kafka wrote can be checked by a path independent of OffsetFetch.
//
// The decoder (DecodeKey, DecodeValue) uses the standard library only and follows Kafka's
// generated schemas (group-coordinator/src/main/resources/common/message/OffsetCommitKey.json,
// OffsetCommitValue.json, GroupMetadataKey.json). The reader (Open, Reader.Read) replays the
// topic the way the coordinator loads it: in log order, later commit wins, a null value
// deletes, transactional commits count only once their COMMIT marker is read.
package offsetlog

import (
	"fmt"
)

// Kind is what a record key describes.
type Kind int

const (
	// KindUnknown is any key version this package does not know (4.x consumer-, share- and
	// streams-group records, future types). Kafka's loaders skip those too.
	KindUnknown Kind = iota
	// KindOffset is an offset commit (key versions 0 and 1).
	KindOffset
	// KindGroup is group metadata (key version 2): membership, not offsets.
	KindGroup
)

func (k Kind) String() string {
	switch k {
	case KindOffset:
		return "offset"
	case KindGroup:
		return "group"
	}
	return "unknown"
}

// Key is a decoded __consumer_offsets record key. Group is set for KindOffset and KindGroup;
// Topic and Partition only for KindOffset.
type Key struct {
	Version   int16
	Kind      Kind
	Group     string
	Topic     string
	Partition int32
}

// OffsetValue is a decoded OffsetCommitValue, or a tombstone (the commit was deleted).
type OffsetValue struct {
	Tombstone bool
	// Version is the value's schema version, 0..4 (-1 for a tombstone).
	Version int16
	Offset  int64
	// LeaderEpoch is -1 when the version has no such field (v0..v2) or the commit had none.
	LeaderEpoch int32
	Metadata    string
	// CommitTimestamp is in milliseconds since the epoch.
	CommitTimestamp int64
	// ExpireTimestamp is in milliseconds since the epoch; only v1 has it, -1 otherwise.
	ExpireTimestamp int64
	// TopicID is the v4 tagged field 0 that Kafka 4.1+ may write; zero when absent.
	TopicID [16]byte
}

// DecodeKey decodes a record key: an int16 version, then the fields of that version. Unknown
// versions are KindUnknown, not an error. Bytes after the last field are ignored, as Kafka's
// own reader ignores them.
func DecodeKey(b []byte) (Key, error) {
	c := &cursor{b: b}
	v, err := c.int16("key version")
	if err != nil {
		return Key{}, err
	}
	k := Key{Version: v}
	switch v {
	case 0, 1:
		k.Kind = KindOffset
		if k.Group, err = c.string("group"); err != nil {
			return Key{}, fmt.Errorf("offset commit key v%d: %w", v, err)
		}
		if k.Topic, err = c.string("topic"); err != nil {
			return Key{}, fmt.Errorf("offset commit key v%d of group %q: %w", v, k.Group, err)
		}
		if k.Partition, err = c.int32("partition"); err != nil {
			return Key{}, fmt.Errorf("offset commit key v%d of group %q topic %q: %w", v, k.Group, k.Topic, err)
		}
	case 2:
		k.Kind = KindGroup
		if k.Group, err = c.string("group"); err != nil {
			return Key{}, fmt.Errorf("group metadata key: %w", err)
		}
	default:
		k.Kind = KindUnknown
	}
	return k, nil
}

// DecodeValue decodes the value of an offset commit record whose key had keyVersion (0 or 1).
// A nil value is a tombstone. An empty non-nil value is corrupt: Kafka's coordinator fails to
// load it too (it reads a version first), so it must not pass as a deletion.
func DecodeValue(keyVersion int16, b []byte) (OffsetValue, error) {
	if keyVersion != 0 && keyVersion != 1 {
		return OffsetValue{}, fmt.Errorf("key version %d is not an offset commit: no offset value to decode", keyVersion)
	}
	if b == nil {
		return OffsetValue{Tombstone: true, Version: -1, LeaderEpoch: -1, ExpireTimestamp: -1}, nil
	}
	c := &cursor{b: b}
	ver, err := c.int16("value version")
	if err != nil {
		return OffsetValue{}, err
	}
	v := OffsetValue{Version: ver, LeaderEpoch: -1, ExpireTimestamp: -1}
	switch ver {
	case 0, 2:
		err = v.readV0(c)
	case 1:
		if err = v.readV0(c); err == nil {
			v.ExpireTimestamp, err = c.int64("expire timestamp")
		}
	case 3, 4:
		err = v.readV3(c, ver == 4)
	default:
		// Not skippable: the record is a commit whose offset we cannot know.
		return OffsetValue{}, fmt.Errorf("%w: offset commit value version %d is not one of 0..4", ErrCorrupt, ver)
	}
	if err != nil {
		return OffsetValue{}, fmt.Errorf("offset commit value v%d: %w", ver, err)
	}
	return v, nil
}

// readV0 reads offset, metadata, commit timestamp (v0, v2, and the start of v1).
func (v *OffsetValue) readV0(c *cursor) (err error) {
	if v.Offset, err = c.int64("offset"); err != nil {
		return err
	}
	if v.Metadata, err = c.string("metadata"); err != nil {
		return err
	}
	v.CommitTimestamp, err = c.int64("commit timestamp")
	return err
}

// readV3 reads offset, leader epoch, metadata, commit timestamp; v4 (flexible) has a compact
// metadata string and tagged fields after the last field.
func (v *OffsetValue) readV3(c *cursor, flexible bool) (err error) {
	if v.Offset, err = c.int64("offset"); err != nil {
		return err
	}
	if v.LeaderEpoch, err = c.int32("leader epoch"); err != nil {
		return err
	}
	if flexible {
		v.Metadata, err = c.compactString("metadata")
	} else {
		v.Metadata, err = c.string("metadata")
	}
	if err != nil {
		return err
	}
	if v.CommitTimestamp, err = c.int64("commit timestamp"); err != nil {
		return err
	}
	if flexible {
		return v.readTaggedFields(c)
	}
	return nil
}

// readTaggedFields reads the tagged-field section: a count, then per field its tag, size and
// bytes. Tag 0 is the topic id of Kafka 4.1+; other tags are skipped, as Kafka keeps them as
// unknown fields. Each field takes at least two bytes, so a huge count fails at the end of b.
func (v *OffsetValue) readTaggedFields(c *cursor) error {
	n, err := c.uvarint("tagged field count")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		tag, err := c.uvarint("tag")
		if err != nil {
			return err
		}
		size, err := c.uvarint("tagged field size")
		if err != nil {
			return err
		}
		if tag == 0 && size != uint32(len(v.TopicID)) {
			// Java reads 16 bytes whatever the size says; a mismatch can only be corruption.
			return fmt.Errorf("%w: topic id tagged field has size %d, want 16", ErrCorrupt, size)
		}
		if size > uint32(c.remaining()) {
			return fmt.Errorf("%w: tagged field %d of %d bytes, %d left", ErrCorrupt, tag, size, c.remaining())
		}
		p, err := c.take(int(size), "tagged field")
		if err != nil {
			return err
		}
		if tag == 0 {
			copy(v.TopicID[:], p)
		}
	}
	return nil
}

// Control record types of a transaction marker's key (Kafka's ControlRecordType).
const (
	controlAbort  int16 = 0
	controlCommit int16 = 1
)

// decodeControlKey reads a control record key: int16 version, int16 type. Kafka requires at
// least these four bytes and reads the type whatever the version.
func decodeControlKey(b []byte) (int16, error) {
	c := &cursor{b: b}
	if _, err := c.int16("control record version"); err != nil {
		return 0, err
	}
	return c.int16("control record type")
}
