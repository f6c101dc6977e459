package mm2log

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/logbatch"
)

const (
	// fetchPartitionBytes is the first fetch size; it doubles up to maxPartitionBytes for a
	// broker that returns only part of an oversized batch (Fetch v3+ returns at least one whole
	// batch however large, so this is for the oldest ones).
	fetchPartitionBytes = 1 << 20
	maxPartitionBytes   = 64 << 20
	fetchMaxWaitMs      = 500
)

// progress is the read of one partition: next is the next offset to fetch, end the high
// watermark when the read began.
type progress struct {
	topic     string
	part      int32
	next, end int64
	maxBytes  int32
}

// bounds sets the partition's log start and high watermark.
func (r *Reader) bounds(ctx context.Context, p *progress) error {
	b, err := kafkaconn.Call(ctx, func() (*sarama.Broker, error) { return r.client.Leader(p.topic, p.part) })
	if err != nil {
		return fmt.Errorf("leader of %s partition %d on %s: %w", p.topic, p.part, r.cluster, err)
	}
	var got [2]int64
	for i, at := range []int64{sarama.OffsetOldest, sarama.OffsetNewest} {
		req := sarama.NewOffsetRequest(r.client.Config().Version)
		req.AddBlock(p.topic, p.part, at, 1)
		resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
		if err != nil {
			return fmt.Errorf("list offsets of %s on broker %d (%s): %w", p.topic, b.ID(), b.Addr(), err)
		}
		blk := resp.GetBlock(p.topic, p.part)
		switch {
		case blk == nil:
			return fmt.Errorf("list offsets of %s partition %d: %w", p.topic, p.part, sarama.ErrIncompleteResponse)
		case blk.Err != sarama.ErrNoError:
			return fmt.Errorf("list offsets of %s partition %d: %w", p.topic, p.part, blk.Err)
		}
		got[i] = blk.Offset
	}
	p.next, p.end = got[0], got[1]
	return nil
}

// fetch asks the partition's leader for the records at p.next and hands them to add,
// advancing p.next past the last batch read (control batches and batches compaction emptied
// included: the end is reached by offsets, never by waiting for a record at end-1).
func (r *Reader) fetch(ctx context.Context, p *progress, add func(logbatch.Record) error, n *counts) error {
	b, err := kafkaconn.Call(ctx, func() (*sarama.Broker, error) { return r.client.Leader(p.topic, p.part) })
	if err != nil {
		return fmt.Errorf("leader of %s partition %d on %s: %w", p.topic, p.part, r.cluster, err)
	}
	req := &sarama.FetchRequest{Version: r.fetchVersion, MaxWaitTime: fetchMaxWaitMs, MinBytes: 1,
		MaxBytes: p.maxBytes, Isolation: sarama.ReadUncommitted}
	if req.Version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1 // no fetch session (KIP-227)
	}
	req.AddBlock(p.topic, p.part, p.next, p.maxBytes, -1)
	resp, err := kafkaconn.Call(ctx, func() (*sarama.FetchResponse, error) { return b.Fetch(req) })
	if err != nil {
		return fmt.Errorf("fetch %s from broker %d (%s): %w", p.topic, b.ID(), b.Addr(), err)
	}
	if resp.ErrorCode != int16(sarama.ErrNoError) {
		return fmt.Errorf("fetch %s from broker %d (%s): %w", p.topic, b.ID(), b.Addr(), sarama.KError(resp.ErrorCode))
	}
	return r.apply(resp.GetBlock(p.topic, p.part), p, resp.ThrottleTime > 0, add, n)
}

// counts are what a read passed over.
type counts struct{ records, controlBatches int64 }

// apply hands one fetch response's records to add and moves p on.
func (r *Reader) apply(blk *sarama.FetchResponseBlock, p *progress, throttled bool, add func(logbatch.Record) error, n *counts) error {
	where := fmt.Sprintf("fetch %s partition %d at offset %d on %s", p.topic, p.part, p.next, r.cluster)
	if blk == nil {
		return fmt.Errorf("%s: %w", where, sarama.ErrIncompleteResponse)
	}
	switch blk.Err {
	case sarama.ErrNoError:
	case sarama.ErrOffsetOutOfRange:
		// The log start moved past the position under the read: records were lost to it.
		return fmt.Errorf("%s (end %d): %w", where, p.end, kafkaconn.Permanent(blk.Err))
	default:
		return fmt.Errorf("%s: %w", where, blk.Err)
	}
	bs, partial, err := logbatch.Of(blk.RecordsSet)
	if err != nil {
		return fmt.Errorf("%s: %w", where, kafkaconn.Permanent(err))
	}
	if len(bs) == 0 {
		switch {
		case partial || blk.Partial:
			if p.maxBytes >= maxPartitionBytes {
				return fmt.Errorf("%s: a record batch is larger than %d bytes", where, maxPartitionBytes)
			}
			p.maxBytes *= 2
			return nil
		case throttled:
			// A throttled response may be empty although records exist (KIP-219).
			return fmt.Errorf("%s: %w", where, kafkaconn.ErrThrottled)
		}
		// Nothing at or after next below the high watermark: compaction removed the rest.
		p.next = p.end
		return nil
	}
	from := p.next
	for _, b := range bs {
		if b.Last < p.next {
			continue
		}
		if err := addBatch(b, p, add, n); err != nil {
			return kafkaconn.Permanent(err)
		}
		p.next = b.Last + 1
		if p.next >= p.end {
			break
		}
	}
	if p.next == from {
		// Only batches before the position: asking again would loop on the same answer.
		return fmt.Errorf("%s: %w", where, kafkaconn.Permanent(errors.New("the broker returned no batch at or after it")))
	}
	return nil
}

// addBatch hands the records of b in [p.next, p.end) to add. Control batches are transaction
// markers, passed over. A transactional data batch is refused: MirrorMaker 2 writes its offset
// syncs and checkpoints with producers of their own, outside any transaction, and whether
// another writer's transaction committed is not something to guess.
func addBatch(b logbatch.Batch, p *progress, add func(logbatch.Record) error, n *counts) error {
	if b.Control {
		n.controlBatches++
		return nil
	}
	for _, rec := range b.Records {
		if rec.Offset < p.next || rec.Offset >= p.end {
			continue
		}
		if b.Transactional {
			return fmt.Errorf("%s partition %d offset %d: written in a transaction (producer %d), which MirrorMaker 2 never does for its own records: not read as one",
				p.topic, p.part, rec.Offset, b.ProducerID)
		}
		if err := add(rec); err != nil {
			return fmt.Errorf("%s partition %d offset %d: %w", p.topic, p.part, rec.Offset, err)
		}
		n.records++
	}
	return nil
}
