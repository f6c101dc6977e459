package mm2log

import (
	"fmt"

	"github.com/IBM/sarama"
)

// record is one record at its absolute offset.
type record struct {
	offset     int64
	key, value []byte
}

// batch is a record batch as the read needs it, v2 batch or legacy message set alike. last+1
// is where the next fetch starts, even when compaction emptied the batch.
type batch struct {
	last          int64
	producerID    int64
	transactional bool
	control       bool
	records       []record
}

// batchesOf turns one partition's fetch response into batches, in log order. A trailing
// batch the response cut short is left out and reported as partial: the next fetch starts at
// it. sarama checked the batch CRCs while decoding.
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
			b := batch{last: rb.LastOffset(), producerID: rb.ProducerID, transactional: rb.IsTransactional, control: rb.Control}
			for _, r := range rb.Records {
				if r != nil {
					b.records = append(b.records, record{offset: rb.FirstOffset + r.OffsetDelta, key: r.Key, value: r.Value})
				}
			}
			out = append(out, b)
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

// legacyBatches converts magic v0/v1 messages (a source cluster older than 0.11, or a log
// still in that format). A compressed wrapper becomes one batch of its inner messages; in
// magic v1 their offsets are relative to the wrapper, whose offset is the last inner one.
func legacyBatches(ms *sarama.MessageSet) ([]batch, error) {
	var out []batch
	for _, mb := range ms.Messages {
		if mb == nil || mb.Msg == nil {
			continue
		}
		inner := mb.Messages()
		var base int64
		if mb.Msg.Version >= 1 && mb.Msg.Set != nil && len(inner) > 0 {
			base = mb.Offset - inner[len(inner)-1].Offset
		}
		b := batch{last: mb.Offset, producerID: -1}
		for _, m := range inner {
			if m == nil || m.Msg == nil {
				return nil, fmt.Errorf("empty message in a legacy message set at offset %d", mb.Offset)
			}
			off := base + m.Offset
			if off > mb.Offset {
				return nil, fmt.Errorf("legacy message offset %d beyond its wrapper's %d", off, mb.Offset)
			}
			b.records = append(b.records, record{offset: off, key: m.Msg.Key, value: m.Msg.Value})
		}
		out = append(out, b)
	}
	return out, nil
}
