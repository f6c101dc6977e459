package offsetlog

import (
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// gtp names one committed offset: group, topic, partition.
type gtp struct {
	group string
	tp    migrate.TopicPartition
}

// partState replays one __consumer_offsets partition the way Kafka's group coordinator loads
// it (OffsetMetadataManager.replay and replayEndTransactionMarker in 4.x): non-transactional
// commits apply at once; transactional ones wait per producer id for the COMMIT marker and then
// apply only over an older record; ABORT drops them; a tombstone deletes the commit and any
// pending transactional commit of that partition.
type partState struct {
	part  int32 // the partition replayed
	parts int32 // partitions of __consumer_offsets, to find misplaced groups
	keep  func(group string) bool

	offsets map[gtp]Committed
	pending map[int64]map[gtp]Committed
	stats   Stats
}

func newPartState(part, parts int32, keep func(string) bool) *partState {
	return &partState{part: part, parts: parts, keep: keep,
		offsets: map[gtp]Committed{}, pending: map[int64]map[gtp]Committed{}, stats: newStats()}
}

// apply replays the records of b whose offsets are in [from, to): from is the fetch position
// (a fetch may return a batch that starts before it), to the snapshot's high watermark.
func (s *partState) apply(b logbatch.Batch, from, to int64) error {
	s.stats.Batches++
	if b.Control {
		s.stats.ControlBatches++
	}
	for _, r := range b.Records {
		if r.Offset < from || r.Offset >= to {
			continue
		}
		var err error
		if b.Control {
			err = s.applyControl(b, r)
		} else {
			err = s.applyRecord(b, r)
		}
		if err != nil {
			return fmt.Errorf("__consumer_offsets partition %d offset %d: %w", s.part, r.Offset, err)
		}
	}
	return nil
}

func (s *partState) applyControl(b logbatch.Batch, r logbatch.Record) error {
	typ, err := decodeControlKey(r.Key)
	if err != nil {
		return fmt.Errorf("transaction marker of producer %d: %w", b.ProducerID, err)
	}
	switch typ {
	case controlCommit:
		s.endTxn(b.ProducerID, true)
	case controlAbort:
		s.endTxn(b.ProducerID, false)
	default:
		// Kafka 4.x ignores control records of unknown types (3.x dropped the pending commits).
		s.stats.UnknownControl++
	}
	return nil
}

func (s *partState) applyRecord(b logbatch.Batch, r logbatch.Record) error {
	if r.Key == nil {
		return fmt.Errorf("%w: record without a key", ErrCorrupt)
	}
	s.stats.Records++
	k, err := DecodeKey(r.Key)
	if err != nil {
		return err
	}
	switch k.Kind {
	case KindGroup:
		s.stats.GroupRecords++
		return nil
	case KindUnknown:
		s.stats.UnknownRecords++
		return nil
	}
	v, err := DecodeValue(k.Version, r.Value)
	if err != nil {
		return fmt.Errorf("group %q topic %q partition %d: %w", k.Group, k.Topic, k.Partition, err)
	}
	if v.Tombstone {
		s.stats.Tombstones++
	} else {
		s.stats.ValueVersions[v.Version]++
	}
	if Partition(k.Group, s.parts) != s.part {
		// The coordinator loads it but serves the group from its own partition only.
		s.stats.Misplaced++
		return nil
	}
	if s.keep != nil && !s.keep(k.Group) {
		return nil
	}
	id := gtp{group: k.Group, tp: migrate.TopicPartition{Topic: k.Topic, Partition: k.Partition}}
	if v.Tombstone {
		delete(s.offsets, id)
		for _, p := range s.pending {
			delete(p, id)
		}
		return nil
	}
	c := committedOf(v, r.Offset, b.Transactional)
	if !b.Transactional {
		s.offsets[id] = c
		return nil
	}
	p := s.pending[b.ProducerID]
	if p == nil {
		p = map[gtp]Committed{}
		s.pending[b.ProducerID] = p
	}
	p[id] = c
	return nil
}

// endTxn applies (commit) or drops (abort) the pending commits of a producer. A committed one
// replaces the current commit only if its record is later in the log: a plain commit written
// after the transactional one wins, whatever order the marker came in.
func (s *partState) endTxn(producerID int64, commit bool) {
	p := s.pending[producerID]
	delete(s.pending, producerID)
	for id, c := range p {
		if !commit {
			s.stats.AbortedCommits++
			continue
		}
		if cur, ok := s.offsets[id]; !ok || c.LogOffset > cur.LogOffset {
			s.offsets[id] = c
			s.stats.TransactionalCommits++
		}
	}
}

// finish counts what is still pending at the snapshot's end: transactions neither committed
// nor aborted yet, whose offsets OffsetFetch does not show either.
func (s *partState) finish() {
	s.stats.Partitions = 1
	for _, p := range s.pending {
		if len(p) > 0 {
			s.stats.OpenTransactions++
			s.stats.PendingCommits += int64(len(p))
		}
	}
}

func committedOf(v OffsetValue, logOffset int64, txn bool) Committed {
	c := Committed{
		Offset:          v.Offset,
		LeaderEpoch:     v.LeaderEpoch,
		Metadata:        v.Metadata,
		CommitTimestamp: time.UnixMilli(v.CommitTimestamp).UTC(),
		ValueVersion:    v.Version,
		LogOffset:       logOffset,
		Transactional:   txn,
	}
	if v.ExpireTimestamp >= 0 {
		c.ExpireTimestamp = time.UnixMilli(v.ExpireTimestamp).UTC()
	}
	return c
}
