package offsetlog

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeKey(t *testing.T) {
	long := strings.Repeat("g", 0x7fff)
	tests := []struct {
		name    string
		in      []byte
		want    Key
		wantErr string
	}{
		{"v0 offset key", keyBytes(0, "grp", "tpc", 3), Key{Version: 0, Kind: KindOffset, Group: "grp", Topic: "tpc", Partition: 3}, ""},
		{"v1 offset key", keyBytes(1, "grüppe-😀", "t", -1), Key{Version: 1, Kind: KindOffset, Group: "grüppe-😀", Topic: "t", Partition: -1}, ""},
		{"empty names", keyBytes(1, "", "", 0), Key{Version: 1, Kind: KindOffset}, ""},
		{"longest name", keyBytes(1, long, "t", 0), Key{Version: 1, Kind: KindOffset, Group: long, Topic: "t"}, ""},
		{"trailing bytes ignored", append(keyBytes(1, "g", "t", 1), 9, 9), Key{Version: 1, Kind: KindOffset, Group: "g", Topic: "t", Partition: 1}, ""},
		{"group metadata", keyBytes(2, "grp", "", 0), Key{Version: 2, Kind: KindGroup, Group: "grp"}, ""},
		{"4.x consumer group record", (&enc{}).i16(3).str("grp").b, Key{Version: 3, Kind: KindUnknown}, ""},
		{"unknown, no body", (&enc{}).i16(1000).b, Key{Version: 1000, Kind: KindUnknown}, ""},
		{"negative version", (&enc{}).i16(-1).b, Key{Version: -1, Kind: KindUnknown}, ""},
		{"empty", nil, Key{}, "key version needs 2 bytes"},
		{"one byte", []byte{0}, Key{}, "key version needs 2 bytes"},
		{"no group", (&enc{}).i16(1).b, Key{}, "group length needs 2 bytes"},
		{"null group", (&enc{}).i16(1).i16(-1).b, Key{}, "non-nullable group is null"},
		{"group past the end", (&enc{}).i16(1).i16(5).raw('a').b, Key{}, "group needs 5 bytes"},
		{"huge group length", (&enc{}).i16(1).i16(0x7fff).b, Key{}, "group needs 32767 bytes"},
		{"no topic", (&enc{}).i16(1).str("g").b, Key{}, `group "g": corrupt __consumer_offsets record: topic length`},
		{"short partition", (&enc{}).i16(0).str("g").str("t").raw(0, 0, 1).b, Key{}, "partition needs 4 bytes"},
		{"group metadata truncated", (&enc{}).i16(2).i16(3).raw('a').b, Key{}, "group metadata key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeKey(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("DecodeKey = %+v, %v; want an ErrCorrupt containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeKey = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDecodeValue(t *testing.T) {
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	base := OffsetValue{Offset: 42, LeaderEpoch: -1, Metadata: "zk2kafka from zk", CommitTimestamp: 1700000000123, ExpireTimestamp: -1}
	with := func(f func(*OffsetValue)) OffsetValue { v := base; f(&v); return v }
	v0 := with(func(v *OffsetValue) { v.Version = 0 })
	v1 := with(func(v *OffsetValue) { v.Version, v.ExpireTimestamp = 1, 1800000000000 })
	v2 := with(func(v *OffsetValue) { v.Version = 2 })
	v3 := with(func(v *OffsetValue) { v.Version, v.LeaderEpoch = 3, 7 })
	v4 := with(func(v *OffsetValue) { v.Version, v.LeaderEpoch = 4, 9 })
	v4id := with(func(v *OffsetValue) { v.Version, v.TopicID = 4, id })
	long := with(func(v *OffsetValue) { v.Version, v.Metadata = 4, strings.Repeat("m", 200) })
	tests := []struct {
		name    string
		key     int16
		in      []byte
		want    OffsetValue
		wantErr string
	}{
		{"v0", 0, valueBytes(v0), v0, ""},
		{"v1 with expire", 1, valueBytes(v1), v1, ""},
		{"v2", 1, valueBytes(v2), v2, ""},
		{"v3 leader epoch", 1, valueBytes(v3), v3, ""},
		{"v4 flexible", 1, valueBytes(v4), v4, ""},
		{"v4 two-byte compact length", 1, valueBytes(long), long, ""},
		{"v4 topic id (4.1)", 1, valueBytes(v4id), v4id, ""},
		{"v4 unknown tags skipped", 1, valueBytes(v4, tagged{5, []byte{1, 2, 3}}, tagged{300, nil}), v4, ""},
		{"v3 trailing bytes ignored", 1, append(valueBytes(v3), 1, 2), v3, ""},
		{"tombstone", 1, nil, OffsetValue{Tombstone: true, Version: -1, LeaderEpoch: -1, ExpireTimestamp: -1}, ""},
		{"empty is not a tombstone", 1, []byte{}, OffsetValue{}, "value version needs 2 bytes"},
		{"version 5", 1, (&enc{}).i16(5).i64(1).b, OffsetValue{}, "value version 5 is not one of 0..4"},
		{"negative version", 1, (&enc{}).i16(-1).b, OffsetValue{}, "value version -1"},
		{"v3 truncated epoch", 1, (&enc{}).i16(3).i64(1).raw(0).b, OffsetValue{}, "leader epoch needs 4 bytes"},
		{"v1 without expire", 1, append((&enc{}).i16(1).b, valueBytes(v0)[2:]...), OffsetValue{}, "expire timestamp needs 8 bytes"},
		{"v0 null metadata", 1, (&enc{}).i16(0).i64(1).i16(-1).b, OffsetValue{}, "non-nullable metadata is null"},
		{"v4 null metadata", 1, (&enc{}).i16(4).i64(1).i32(-1).uv(0).b, OffsetValue{}, "non-nullable metadata is null"},
		{"v4 metadata too long", 1, (&enc{}).i16(4).i64(1).i32(-1).uv(0x8001).b, OffsetValue{}, "exceeds 32767"},
		{"v4 huge length, no alloc", 1, (&enc{}).i16(4).i64(1).i32(-1).raw(0xff, 0xff, 0xff, 0xff, 0x0f).b, OffsetValue{}, "exceeds 32767"},
		{"v4 varint over 32 bits", 1, (&enc{}).i16(4).i64(1).i32(-1).raw(0xff, 0xff, 0xff, 0xff, 0x7f).b, OffsetValue{}, "overflows 32 bits"},
		{"v4 varint of 6 bytes", 1, (&enc{}).i16(4).i64(1).i32(-1).raw(0x80, 0x80, 0x80, 0x80, 0x80, 0).b, OffsetValue{}, "longer than 5 bytes"},
		{"v4 no tagged fields", 1, (&enc{}).i16(4).i64(1).i32(-1).cstr("").i64(0).b, OffsetValue{}, "tagged field count"},
		{"v4 huge tag count", 1, (&enc{}).i16(4).i64(1).i32(-1).cstr("").i64(0).uv(1 << 30).uv(7).uv(0).b, OffsetValue{}, "tag needs 1 bytes"},
		{"v4 tag past the end", 1, (&enc{}).i16(4).i64(1).i32(-1).cstr("").i64(0).uv(1).uv(7).uv(100).raw(1).b, OffsetValue{}, "tagged field 7 of 100 bytes"},
		{"v4 short topic id", 1, (&enc{}).i16(4).i64(1).i32(-1).cstr("").i64(0).uv(1).uv(0).uv(3).raw(1, 2, 3).b, OffsetValue{}, "topic id tagged field has size 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeValue(tc.key, tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("DecodeValue = %+v, %v; want an ErrCorrupt containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeValue = %+v, %v;\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestDecodeValueNeedsOffsetKey(t *testing.T) {
	for _, kv := range []int16{2, 3, -1} {
		if v, err := DecodeValue(kv, valueBytes(OffsetValue{Version: 3})); err == nil {
			t.Errorf("DecodeValue(key version %d) = %+v, want an error: not an offset commit", kv, v)
		}
	}
}

func TestDecodeControlKey(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want int16
		ok   bool
	}{
		{controlKey(controlCommit), controlCommit, true},
		{controlKey(controlAbort), controlAbort, true},
		{(&enc{}).i16(1).i16(9).b, 9, true},
		{[]byte{0, 0, 0}, 0, false},
		{nil, 0, false},
	} {
		got, err := decodeControlKey(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("decodeControlKey(%x) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
