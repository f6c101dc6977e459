package mm2

import (
	"encoding/binary"
	"strings"
	"testing"
)

// Records as MirrorMaker 2 serializes them (Kafka protocol types: int16-length strings,
// big-endian integers), built by hand here so the decoder is checked against the format, not
// against itself.
func str(s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
}

func i16(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func i32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestDecodeOffsetSync(t *testing.T) {
	key, value := cat(str("orders"), i32(3)), cat(i64(1500), i64(420))
	cases := []struct {
		name       string
		key, value []byte
		want       OffsetSync
		err        string
	}{
		{name: "a sync", key: key, value: value, want: OffsetSync{Topic: "orders", Partition: 3, Upstream: 1500, Downstream: 420}},
		{name: "key cut short", key: key[:len(key)-1], value: value, err: "key: record cut short"},
		{name: "value cut short", key: key, value: value[:12], err: "value: record cut short"},
		{name: "bytes left over", key: key, value: cat(value, []byte{0}), err: "value: 1 bytes left over"},
		{name: "null topic", key: cat(i16(-1), i32(0)), value: value, err: "null string"},
		{name: "negative offset", key: key, value: cat(i64(-1), i64(4)), err: "negative offset"},
		{name: "empty", err: "record cut short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeOffsetSync(tc.key, tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("DecodeOffsetSync = %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeOffsetSync = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDecodeCheckpoint(t *testing.T) {
	key := cat(str("billing"), str("src.orders"), i32(7))
	value := cat(i16(0), i64(1500), i64(421), str("meta"))
	cases := []struct {
		name       string
		key, value []byte
		want       Checkpoint
		err        string
	}{
		{name: "a checkpoint", key: key, value: value,
			want: Checkpoint{Group: "billing", Topic: "src.orders", Partition: 7, Upstream: 1500, Downstream: 421, Metadata: "meta"}},
		{name: "unknown version", key: key, value: cat(i16(1), i64(1), i64(1), str("")), err: "value version 1"},
		{name: "metadata cut short", key: key, value: value[:len(value)-2], err: "value: record cut short"},
		{name: "key without partition", key: cat(str("billing"), str("src.orders")), value: value, err: "key: record cut short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCheckpoint(tc.key, tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("DecodeCheckpoint = %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeCheckpoint = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
