package offsetlog

import "encoding/binary"

// enc builds wire bytes for tests, independently of the decoder.
type enc struct{ b []byte }

func (e *enc) i16(v int16) *enc { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)); return e }
func (e *enc) i32(v int32) *enc { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)); return e }
func (e *enc) i64(v int64) *enc { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)); return e }
func (e *enc) raw(p ...byte) *enc {
	e.b = append(e.b, p...)
	return e
}

func (e *enc) str(s string) *enc { return e.i16(int16(len(s))).raw([]byte(s)...) }

func (e *enc) uv(v uint32) *enc {
	for v >= 0x80 {
		e.b = append(e.b, byte(v)|0x80)
		v >>= 7
	}
	e.b = append(e.b, byte(v))
	return e
}

func (e *enc) cstr(s string) *enc { return e.uv(uint32(len(s)) + 1).raw([]byte(s)...) }

// keyBytes encodes an offset commit key (versions 0, 1) or a group metadata key (2).
func keyBytes(version int16, group, topic string, partition int32) []byte {
	e := (&enc{}).i16(version).str(group)
	if version == 2 {
		return e.b
	}
	return e.str(topic).i32(partition).b
}

// valueBytes encodes v at v.Version, with extra tagged fields (tag, bytes) for v4.
func valueBytes(v OffsetValue, tags ...tagged) []byte {
	e := (&enc{}).i16(v.Version).i64(v.Offset)
	switch v.Version {
	case 0, 1, 2:
		e.str(v.Metadata).i64(v.CommitTimestamp)
		if v.Version == 1 {
			e.i64(v.ExpireTimestamp)
		}
	case 3:
		e.i32(v.LeaderEpoch).str(v.Metadata).i64(v.CommitTimestamp)
	case 4:
		e.i32(v.LeaderEpoch).cstr(v.Metadata).i64(v.CommitTimestamp)
		if v.TopicID != ([16]byte{}) {
			tags = append([]tagged{{0, v.TopicID[:]}}, tags...)
		}
		e.uv(uint32(len(tags)))
		for _, t := range tags {
			e.uv(t.tag).uv(uint32(len(t.data))).raw(t.data...)
		}
	}
	return e.b
}

type tagged struct {
	tag  uint32
	data []byte
}

func controlKey(typ int16) []byte { return (&enc{}).i16(0).i16(typ).b }
