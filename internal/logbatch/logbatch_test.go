package logbatch

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

func offsetsOf(bs []Batch) [][]int64 {
	var out [][]int64
	for _, b := range bs {
		offs := []int64{b.Base, b.Last}
		for _, r := range b.Records {
			offs = append(offs, r.Offset)
		}
		out = append(out, offs)
	}
	return out
}

func TestBatchesOf(t *testing.T) {
	msg := func(off int64, version int8, key string) *sarama.MessageBlock {
		return &sarama.MessageBlock{Offset: off, Msg: &sarama.Message{Key: []byte(key), Value: []byte("v"), Version: version}}
	}
	wrapper := func(off int64, version int8, inner ...*sarama.MessageBlock) *sarama.MessageBlock {
		return &sarama.MessageBlock{Offset: off, Msg: &sarama.Message{Version: version, Codec: sarama.CompressionGZIP,
			Set: &sarama.MessageSet{Messages: inner}}}
	}
	v2 := &sarama.RecordBatch{Version: 2, FirstOffset: 100, LastOffsetDelta: 4, ProducerID: 9, IsTransactional: true,
		Records: []*sarama.Record{{OffsetDelta: 0, Key: []byte("a")}, {OffsetDelta: 3, Key: []byte("b")}}}
	emptied := &sarama.RecordBatch{Version: 2, FirstOffset: 105, LastOffsetDelta: 2, ProducerID: -1}
	marker := &sarama.RecordBatch{Version: 2, FirstOffset: 108, Control: true, ProducerID: 9, IsTransactional: true,
		Records: []*sarama.Record{{Key: []byte{0, 0, 0, 1}}}} // a commit marker's key
	partial := &sarama.RecordBatch{Version: 2, FirstOffset: 109, PartialTrailingRecord: true}
	tests := []struct {
		name    string
		sets    []*sarama.Records
		want    [][]int64 // per batch: base, last, record offsets
		partial bool
	}{
		{"v2 batches, an emptied one, a marker, a partial tail",
			[]*sarama.Records{{RecordBatch: v2}, nil, {RecordBatch: emptied}, {RecordBatch: marker}, {RecordBatch: partial}},
			[][]int64{{100, 104, 100, 103}, {105, 107}, {108, 108, 108}}, true},
		{"legacy v0 uncompressed and compressed (absolute inner offsets)",
			[]*sarama.Records{{MsgSet: &sarama.MessageSet{Messages: []*sarama.MessageBlock{
				msg(5, 0, "k"), wrapper(8, 0, msg(6, 0, "x"), msg(8, 0, "y"))}}}},
			[][]int64{{5, 5, 5}, {6, 8, 6, 8}}, false},
		{"legacy v1 compressed: inner offsets relative, wrapper has the last",
			[]*sarama.Records{{MsgSet: &sarama.MessageSet{Messages: []*sarama.MessageBlock{
				wrapper(42, 1, msg(0, 1, "x"), msg(1, 1, "y"), msg(2, 1, "z"))}, PartialTrailingMessage: true}}},
			[][]int64{{40, 42, 40, 41, 42}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bs, partial, err := Of(tc.sets)
			if err != nil {
				t.Fatal(err)
			}
			if got := offsetsOf(bs); !slices.EqualFunc(got, tc.want, slices.Equal[[]int64]) || partial != tc.partial {
				t.Errorf("batches %v partial %v, want %v partial %v", got, partial, tc.want, tc.partial)
			}
		})
	}
	bs, _, err := Of([]*sarama.Records{{RecordBatch: v2}, {RecordBatch: marker}})
	if err != nil || bs[0].ProducerID != 9 || !bs[0].Transactional || bs[0].Control || !bs[1].Control {
		t.Errorf("batch flags lost: %+v, %v", bs, err)
	}
}

func TestBatchesOfCorruptLegacy(t *testing.T) {
	bad := &sarama.MessageBlock{Offset: 3, Msg: &sarama.Message{Version: 0, Set: &sarama.MessageSet{Messages: []*sarama.MessageBlock{
		{Offset: 9, Msg: &sarama.Message{}}}}}}
	_, _, err := Of([]*sarama.Records{{MsgSet: &sarama.MessageSet{Messages: []*sarama.MessageBlock{bad}}}})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "beyond its wrapper") {
		t.Errorf("inner offset past the wrapper: %v, want ErrMalformed", err)
	}
}

// The Fetch version asked for each release line must be one its brokers take (0.10.2.2 and
// 1.1.1 observed on the stack, the others from the release's kafka-clients), chosen for the
// release rather than left to sarama's clamp (0.10.2 only has v0-v3).
func TestFetchVersionPerRelease(t *testing.T) {
	tests := []struct {
		version sarama.KafkaVersion
		max     int16 // the broker's Fetch maximum
	}{
		{sarama.V0_10_2_0, 3},
		{sarama.V0_11_0_0, 5},
		{sarama.V1_0_0_0, 6},
		{sarama.V1_1_0_0, 7},
		{sarama.V2_0_0_0, 8},
		{sarama.V2_1_0_0, 10},
	}
	for _, tt := range tests {
		if got := FetchVersion(tt.version); got > tt.max || got < 3 {
			t.Errorf("Kafka %s: Fetch v%d, want v3 to v%d", tt.version, got, tt.max)
		}
	}
}
