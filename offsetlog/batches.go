package offsetlog

import (
	"fmt"

	"github.com/IBM/sarama"
)

// noProducerID is RecordBatch.NO_PRODUCER_ID: the coordinator's own (non-transactional) writes.
const noProducerID = -1

// batchesOf turns the record sets of one partition's fetch response into batches, in log
// order. A trailing batch the response cut short is left out and reported as partial; the
// next fetch starts at it. Batch CRCs were checked by sarama while decoding.
func batchesOf(sets []*sarama.Records) ([]batch, bool, error) {
	var out []batch
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

// recordBatch converts a v2 record batch. Control batches (transaction markers) keep their
// records: the replay reads the marker's type from the key. sarama's partition consumer
// would drop them, which is one reason this package fetches by itself.
func recordBatch(rb *sarama.RecordBatch) batch {
	b := batch{
		base:          rb.FirstOffset,
		last:          rb.LastOffset(),
		producerID:    rb.ProducerID,
		transactional: rb.IsTransactional,
		control:       rb.Control,
		records:       make([]record, 0, len(rb.Records)),
	}
	for _, r := range rb.Records {
		if r == nil {
			continue
		}
		b.records = append(b.records, record{offset: rb.FirstOffset + r.OffsetDelta, key: r.Key, value: r.Value})
	}
	return b
}

// legacyBatches converts a message set of magic v0/v1 messages (logs older than 0.11 that
// compaction has not rewritten). A compressed wrapper becomes one batch of its inner messages;
// in magic v1 their offsets are relative to the wrapper, whose offset is the last inner one.
func legacyBatches(ms *sarama.MessageSet) ([]batch, error) {
	var out []batch
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
		b := batch{last: mb.Offset, producerID: noProducerID}
		for i, m := range inner {
			if m == nil || m.Msg == nil {
				return nil, fmt.Errorf("%w: empty message in a legacy message set at offset %d", ErrCorrupt, mb.Offset)
			}
			off := base + m.Offset
			if i == 0 {
				b.base = off
			}
			if off > mb.Offset {
				return nil, fmt.Errorf("%w: legacy message offset %d beyond its wrapper's %d", ErrCorrupt, off, mb.Offset)
			}
			b.records = append(b.records, record{offset: off, key: m.Msg.Key, value: m.Msg.Value})
		}
		out = append(out, b)
	}
	return out, nil
}
