package offsetlog

import (
	"bytes"
	"errors"
	"testing"
)

// The committed corpora in testdata/fuzz/FuzzDecodeKey and FuzzDecodeValue hold record bytes
// captured from the real 3.9 and 4.1 brokers (see TestRealRecords, ZK2KAFKA_WRITE_SEEDS).

func FuzzDecodeKey(f *testing.F) {
	f.Add(keyBytes(0, "g", "t", 0))
	f.Add(keyBytes(1, "grüppe", "topic", 17))
	f.Add(keyBytes(2, "g", "", 0))
	f.Add((&enc{}).i16(3).str("g").b)
	f.Add([]byte{0, 1, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKey(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeKey(%x): error %v is not ErrCorrupt", b, err)
			}
			return
		}
		if len(k.Group)+len(k.Topic) > len(b) {
			t.Fatalf("DecodeKey(%x) = %+v: strings longer than the input", b, k)
		}
		if k.Kind == KindUnknown {
			return
		}
		// Re-encoding gives back the input's prefix: nothing was invented or lost.
		again := keyBytes(k.Version, k.Group, k.Topic, k.Partition)
		if !bytes.HasPrefix(b, again) {
			t.Fatalf("DecodeKey(%x) = %+v, which encodes as %x", b, k, again)
		}
	})
}

func FuzzDecodeValue(f *testing.F) {
	for v := int16(0); v <= 4; v++ {
		f.Add(int16(1), valueBytes(OffsetValue{Version: v, Offset: 42, LeaderEpoch: 3, Metadata: "meta", CommitTimestamp: 1700000000000, ExpireTimestamp: 1800000000000}))
	}
	f.Add(int16(1), valueBytes(OffsetValue{Version: 4, Offset: 1, TopicID: [16]byte{1}}, tagged{9, []byte{1, 2}}))
	f.Add(int16(0), []byte{0, 4, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(int16(2), []byte{0, 0})
	f.Fuzz(func(t *testing.T, keyVersion int16, b []byte) {
		if keyVersion != 0 && keyVersion != 1 {
			if v, err := DecodeValue(keyVersion, b); err == nil {
				t.Fatalf("DecodeValue(key version %d) = %+v: only offset commit keys have offset values", keyVersion, v)
			}
			keyVersion &= 1 // and decode the bytes anyway, so no input is wasted
		}
		v, err := DecodeValue(keyVersion, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeValue(%x): error %v is not ErrCorrupt", b, err)
			}
			return
		}
		if v.Tombstone {
			if b != nil {
				t.Fatalf("DecodeValue(%x): tombstone from non-nil bytes", b)
			}
			return
		}
		if len(v.Metadata) > len(b) || v.Version < 0 || v.Version > 4 {
			t.Fatalf("DecodeValue(%x) = %+v: impossible", b, v)
		}
		again := valueBytes(v)
		if v.Version < 4 && !bytes.HasPrefix(b, again) {
			t.Fatalf("DecodeValue(%x) = %+v, which encodes as %x", b, v, again)
		}
		// v4 drops unknown tagged fields: its re-encoding must at least decode the same.
		if w, err := DecodeValue(keyVersion, again); err != nil || w != v {
			t.Fatalf("DecodeValue(%x) = %+v; its re-encoding %x decodes as %+v, %v", b, v, again, w, err)
		}
	})
}
