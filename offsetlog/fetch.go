package offsetlog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
)

const (
	// fetchPartitionBytes is the first per-partition fetch size. Fetch v3+ returns at least one
	// whole batch however large; the size doubles up to maxPartitionBytes for brokers that
	// return only part of an oversized batch.
	fetchPartitionBytes = 1 << 20
	maxPartitionBytes   = 64 << 20
	fetchMaxBytes       = 32 << 20
	fetchMaxWaitMs      = 500
)

// progress is the fetch state of one partition: next is the next offset to fetch, end the
// high watermark at the start of the read (the snapshot's end). solo is set when a fetch of
// several partitions brought none of its records: the broker stops filling a response at its
// size limit and leaves the other partitions empty, so only a fetch of it alone can tell
// "nothing left" from "no room".
type progress struct {
	part      int32
	bounded   bool
	solo      bool
	next, end int64
	maxBytes  int32
	st        *partState
}

func (p *progress) done() bool { return p.bounded && p.next >= p.end }

// read replays parts (of n partitions in all) and merges their states. A partition is fetched
// by one goroutine at a time, so its state needs no lock.
func (r *Reader) read(ctx context.Context, parts []int32, n int32, keep func(string) bool) (Offsets, Stats, error) {
	all := make([]*progress, len(parts))
	for i, p := range parts {
		all[i] = &progress{part: p, maxBytes: fetchPartitionBytes, st: newPartState(p, n, keep)}
	}
	if err := r.retry(ctx, "list offsets of "+Topic, func() error { return r.bounds(ctx, all) }); err != nil {
		return nil, Stats{}, err
	}
	for {
		var todo []*progress
		for _, p := range all {
			if !p.done() {
				todo = append(todo, p)
			}
		}
		if len(todo) == 0 {
			break
		}
		if err := r.retry(ctx, "fetch "+Topic, func() error { return r.round(ctx, todo) }); err != nil {
			return nil, Stats{}, err
		}
	}
	out, stats := Offsets{}, newStats()
	for _, p := range all {
		p.st.finish()
		stats.add(p.st.stats)
		for id, c := range p.st.offsets {
			g := out[id.group]
			if g == nil {
				g = map[migrate.TopicPartition]Committed{}
				out[id.group] = g
			}
			g[id.tp] = c
		}
	}
	return out, stats, nil
}

// bounds sets the start (log start) and end (high watermark) of every partition not bounded
// yet, with one ListOffsets request per leader and bound. The end is read_uncommitted's: the
// replay sees open transactions and decides about them itself.
func (r *Reader) bounds(ctx context.Context, all []*progress) error {
	var todo []*progress
	for _, p := range all {
		if !p.bounded {
			todo = append(todo, p)
		}
	}
	byLeader, err := r.leaders(ctx, todo)
	if err != nil {
		return err
	}
	for b, ps := range byLeader {
		got := map[int64]map[int32]int64{}
		for _, at := range []int64{sarama.OffsetOldest, sarama.OffsetNewest} {
			req := sarama.NewOffsetRequest(r.client.Config().Version)
			for _, p := range ps {
				req.AddBlock(Topic, p.part, at, 1)
			}
			resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
			if err != nil {
				return fmt.Errorf("list offsets of %s on broker %d (%s): %w", Topic, b.ID(), b.Addr(), err)
			}
			got[at] = map[int32]int64{}
			for _, p := range ps {
				blk := resp.GetBlock(Topic, p.part)
				if blk == nil {
					return fmt.Errorf("list offsets of %s partition %d: %w", Topic, p.part, sarama.ErrIncompleteResponse)
				}
				if blk.Err != sarama.ErrNoError {
					return fmt.Errorf("list offsets of %s partition %d: %w", Topic, p.part, blk.Err)
				}
				got[at][p.part] = blk.Offset
			}
		}
		for _, p := range ps {
			p.next, p.end, p.bounded = got[sarama.OffsetOldest][p.part], got[sarama.OffsetNewest][p.part], true
		}
	}
	return nil
}

// leaders groups partitions by their current leader.
func (r *Reader) leaders(ctx context.Context, ps []*progress) (map[*sarama.Broker][]*progress, error) {
	out := map[*sarama.Broker][]*progress{}
	for _, p := range ps {
		b, err := kafkaconn.Call(ctx, func() (*sarama.Broker, error) { return r.client.Leader(Topic, p.part) })
		if err != nil {
			return nil, fmt.Errorf("leader of %s partition %d: %w", Topic, p.part, err)
		}
		out[b] = append(out[b], p)
	}
	return out, nil
}

// round sends Fetch requests to each leader of the unfinished partitions, leaders concurrently,
// and replays what comes back: one request for the partitions not solo, one per solo partition.
// Progress made is kept when a request fails; the error is the first permanent one.
func (r *Reader) round(ctx context.Context, todo []*progress) error {
	byLeader, err := r.leaders(ctx, todo)
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for b, ps := range byLeader {
		var shared []*progress
		var reqs [][]*progress
		for _, p := range ps {
			if p.solo {
				reqs = append(reqs, []*progress{p})
			} else {
				shared = append(shared, p)
			}
		}
		if len(shared) > 0 {
			reqs = append(reqs, shared)
		}
		wg.Go(func() {
			for _, req := range reqs {
				if err := r.fetch(ctx, b, req); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return firstPermanent(errs)
}

// fetch sends one Fetch for ps to their leader b and replays each partition's batches.
func (r *Reader) fetch(ctx context.Context, b *sarama.Broker, ps []*progress) error {
	req := &sarama.FetchRequest{Version: r.fetchVersion, MaxWaitTime: fetchMaxWaitMs, MinBytes: 1,
		MaxBytes: fetchMaxBytes, Isolation: sarama.ReadUncommitted}
	if req.Version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1 // no fetch session (KIP-227)
	}
	for _, p := range ps {
		req.AddBlock(Topic, p.part, p.next, p.maxBytes, -1)
	}
	resp, err := kafkaconn.Call(ctx, func() (*sarama.FetchResponse, error) { return b.Fetch(req) })
	if err != nil {
		return fmt.Errorf("fetch %s from broker %d (%s): %w", Topic, b.ID(), b.Addr(), err)
	}
	if resp.ErrorCode != int16(sarama.ErrNoError) {
		return fmt.Errorf("fetch %s from broker %d (%s): %w", Topic, b.ID(), b.Addr(), sarama.KError(resp.ErrorCode))
	}
	var errs []error
	for _, p := range ps {
		if err := r.replay(resp.GetBlock(Topic, p.part), p, resp.ThrottleTime > 0, len(ps) == 1); err != nil {
			errs = append(errs, err)
		}
	}
	return firstPermanent(errs)
}

// replay applies the batches of one partition's fetch response and advances its position.
// An empty answer ends the partition only when it was fetched alone and not throttled (a
// throttled response may be empty although records exist, KIP-219).
func (r *Reader) replay(blk *sarama.FetchResponseBlock, p *progress, throttled, alone bool) error {
	where := fmt.Sprintf("fetch %s partition %d at offset %d", Topic, p.part, p.next)
	if blk == nil {
		return fmt.Errorf("%s: %w", where, sarama.ErrIncompleteResponse)
	}
	switch blk.Err {
	case sarama.ErrNoError:
	case sarama.ErrOffsetOutOfRange:
		// Records were deleted under the read (log start moved): the replay is incomplete.
		return fmt.Errorf("%s (snapshot end %d): %w", where, p.end, kafkaconn.Permanent(blk.Err))
	default:
		return fmt.Errorf("%s: %w", where, blk.Err)
	}
	bs, partial, err := logbatch.Of(blk.RecordsSet)
	if err != nil {
		return fmt.Errorf("%s: %w", where, kafkaconn.Permanent(fmt.Errorf("%w: %w", ErrCorrupt, err)))
	}
	if len(bs) == 0 {
		if partial || blk.Partial {
			if p.maxBytes >= maxPartitionBytes {
				return fmt.Errorf("%s: a record batch is larger than %d bytes", where, maxPartitionBytes)
			}
			p.maxBytes *= 2
			return nil
		}
		if throttled {
			return fmt.Errorf("%s: %w", where, kafkaconn.ErrThrottled)
		}
		if !alone {
			p.solo = true
			return nil
		}
		// Nothing at or after next below the high watermark: compaction removed the rest.
		r.log.Debug("no records left below the snapshot end", "partition", p.part, "next", p.next, "end", p.end)
		p.next = p.end
		return nil
	}
	p.solo = false
	from := p.next
	for _, b := range bs {
		if b.Last < p.next {
			continue
		}
		if err := p.st.apply(b, p.next, p.end); err != nil {
			return kafkaconn.Permanent(err)
		}
		p.next = b.Last + 1
		if p.done() {
			break
		}
	}
	if p.next == from {
		// Only batches before the position: asking again would loop on the same answer.
		return fmt.Errorf("%s: %w", where, kafkaconn.Permanent(errors.New("the broker returned no batch at or after it")))
	}
	return nil
}
