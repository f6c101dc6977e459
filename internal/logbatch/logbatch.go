// Package logbatch turns the record sets of a Fetch response into record batches, v2 batches
// and legacy (magic 0/1) message sets alike, as the packages that read a Kafka log by
// themselves need them: every batch's last offset (where the next fetch starts, even when
// compaction emptied the batch), its producer and transaction flags, and control batches with
// their records (sarama's partition consumer drops them, and the end of a log whose last batch
// is a transaction marker is known exactly only from the batch).
package logbatch

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// NoProducerID is RecordBatch.NO_PRODUCER_ID: a batch written outside any idempotent or
// transactional producer (legacy message sets always).
const NoProducerID = -1

// ErrMalformed marks a message set whose offsets contradict each other.
var ErrMalformed = errors.New("malformed record set")

// Record is one record at its absolute offset.
type Record struct {
	Offset     int64
	Key, Value []byte
}

// Batch is a record batch as a reader needs it. Base is its first offset, Last its last: Last+1
// is where the next fetch starts.
type Batch struct {
	Base, Last    int64
	ProducerID    int64
	Transactional bool
	Control       bool
	Records       []Record
}

// Of turns one partition's fetch response into batches, in log order. A trailing batch the
// response cut short is left out and reported as partial: the next fetch starts at it. sarama
// checked the batch CRCs while decoding.
func Of(sets []*sarama.Records) ([]Batch, bool, error) {
	var out []Batch
	for _, rs := range sets {
		switch {
		case rs == nil:
			continue
		case rs.RecordBatch != nil:
			rb := rs.RecordBatch
			if rb.PartialTrailingRecord {
				return out, true, nil
			}
			out = append(out, recordBatch(rb))
		case rs.MsgSet != nil:
			bs, err := legacyBatches(rs.MsgSet)
			if err != nil {
				return nil, false, err
			}
			out = append(out, bs...)
			if rs.MsgSet.PartialTrailingMessage {
				return out, true, nil
			}
		}
	}
	return out, false, nil
}

// recordBatch converts a v2 record batch. Control batches keep their records: a replay reads
// the marker's type from the key.
func recordBatch(rb *sarama.RecordBatch) Batch {
	b := Batch{
		Base:          rb.FirstOffset,
		Last:          rb.LastOffset(),
		ProducerID:    rb.ProducerID,
		Transactional: rb.IsTransactional,
		Control:       rb.Control,
		Records:       make([]Record, 0, len(rb.Records)),
	}
	for _, r := range rb.Records {
		if r == nil {
			continue
		}
		b.Records = append(b.Records, Record{Offset: rb.FirstOffset + r.OffsetDelta, Key: r.Key, Value: r.Value})
	}
	return b
}

// legacyBatches converts a message set of magic v0/v1 messages (a cluster older than 0.11, or
// a log compaction has not rewritten since). A compressed wrapper becomes one batch of its
// inner messages; in magic v1 their offsets are relative to the wrapper, whose offset is the
// last inner one.
func legacyBatches(ms *sarama.MessageSet) ([]Batch, error) {
	var out []Batch
	for _, mb := range ms.Messages {
		if mb == nil || mb.Msg == nil {
			continue
		}
		inner := mb.Messages()
		if len(inner) == 0 {
			continue
		}
		var base int64
		if mb.Msg.Version >= 1 && mb.Msg.Set != nil {
			base = mb.Offset - inner[len(inner)-1].Offset
		}
		b := Batch{Last: mb.Offset, ProducerID: NoProducerID}
		for i, m := range inner {
			if m == nil || m.Msg == nil {
				return nil, fmt.Errorf("%w: empty message in a legacy message set at offset %d", ErrMalformed, mb.Offset)
			}
			off := base + m.Offset
			if i == 0 {
				b.Base = off
			}
			if off > mb.Offset {
				return nil, fmt.Errorf("%w: legacy message offset %d beyond its wrapper's %d", ErrMalformed, off, mb.Offset)
			}
			b.Records = append(b.Records, Record{Offset: off, Key: m.Msg.Key, Value: m.Msg.Value})
		}
		out = append(out, b)
	}
	return out, nil
}

// FetchVersion is the Fetch version to ask for: the highest sarama decodes without topic ids
// (v11) for the configured Kafka version. sarama lowers it to the broker's range; each release
// line's own maximum is asked for here rather than left to that clamp.
func FetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 11
	case v.IsAtLeast(sarama.V2_1_0_0):
		return 10
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 7
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 4 // record batches, isolation level
	default:
		// 0.10.2: message sets only (magic 0/1, compressed wrappers included), no isolation
		// level, no transactions to decide.
		return 3
	}
}
