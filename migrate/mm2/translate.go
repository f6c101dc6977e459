package mm2

import (
	"fmt"
	"slices"
)

// Class says how a source offset was translated, or why it could not be.
type Class string

const (
	// Exact: a sync pins the offset; the consumer resumes at the same record.
	Exact Class = "exact"
	// RoundedDown: the offset lies past a sync and no sync pins it; the target is just past the
	// sync before it, and the consumer may read again up to MaxReread records.
	RoundedDown Class = "rounded-down"
	// FromCheckpoint: the group's own checkpoint places the offset higher than the syncs left
	// do (they were compacted away below it, or lie far apart): MirrorMaker 2 translated the
	// group's committed offset, at or below this one, when it still had the syncs for it.
	FromCheckpoint Class = "checkpoint"
	// NoSync: the partition has no offset sync: not replicated, or not synced yet.
	NoSync Class = "no-sync"
	// BelowFirstSync: every sync left is above the offset (older ones were compacted away, or
	// replication started after it): where its records went is not known.
	BelowFirstSync Class = "below-first-sync"
	// Behind: the offset is further past the latest sync than MirrorMaker 2 lets a partition
	// run without a new sync (offset.lag.max): replication has not reached it yet, or its
	// syncs are not written yet; translating now would re-read needlessly many records.
	Behind Class = "replication-behind"
)

// Blocked reports whether c leaves nothing to write.
func (c Class) Blocked() bool { return c != Exact && c != RoundedDown && c != FromCheckpoint }

// Translation is one source offset's place in the target.
type Translation struct {
	Class Class
	// Target is the offset to commit in the target (unset when blocked).
	Target int64
	// MaxReread is the most records a consumer resumed at Target may read again: 0 when exact.
	MaxReread int64
	// Reason says why a blocked class is blocked, naming the syncs it was decided from.
	Reason string
}

// Syncs are one source partition's offset syncs, in ascending upstream order.
type Syncs struct {
	list []pin
}

// pin is an offset sync as a partition's Syncs keep it: its topic and partition are the
// partition's. A long dual-commit keeps every sync it reads, one per offset.lag.max records or
// so of each partition: 16 bytes each rather than an OffsetSync's 40.
type pin struct{ Upstream, Downstream int64 }

// Add takes the partition's next sync, in the order of the offset-syncs topic. A sync whose
// upstream offset is below the latest one's means the source partition started again (the
// topic re-created, its log truncated): every earlier sync is then forgotten, as MirrorMaker 2
// forgets them. So does one whose downstream offset is below the latest one's: the target's
// replica started again (re-created, or the target cluster rebuilt while MirrorMaker 2 kept its
// source positions), and the earlier syncs point at target offsets that now hold other
// records; kept, they would place an offset past records the consumer has not read. A repeat
// of the latest upstream offset replaces it.
func (s *Syncs) Add(o OffsetSync) {
	if n := len(s.list); n > 0 {
		last := s.list[n-1]
		switch {
		case o.Upstream < last.Upstream, o.Downstream < last.Downstream:
			s.list = s.list[:0]
		case o.Upstream == last.Upstream:
			s.list[n-1] = pin{o.Upstream, o.Downstream}
			return
		}
	}
	s.list = append(s.list, pin{o.Upstream, o.Downstream})
}

// Len is how many syncs are kept.
func (s Syncs) Len() int { return len(s.list) }

// First is the upstream and downstream offsets of the first sync kept, false when none is.
func (s Syncs) First() (upstream, downstream int64, ok bool) {
	if len(s.list) == 0 {
		return 0, 0, false
	}
	return s.list[0].Upstream, s.list[0].Downstream, true
}

// Clone is a copy that Add may change while s is read elsewhere.
func (s Syncs) Clone() Syncs { return Syncs{list: slices.Clone(s.list)} }

// above is the index of the first sync whose upstream offset is above off (len when none is).
func (s Syncs) above(off int64) int {
	i, _ := slices.BinarySearchFunc(s.list, off, func(o pin, off int64) int {
		if o.Upstream <= off {
			return -1
		}
		return 1
	})
	return i
}

// Translate places source offset off in the target. lagMax is MirrorMaker 2's offset.lag.max
// (the most source records it replicates past a sync before it writes a new one; 100 unless
// configured): an offset further past the latest sync than that is Behind.
//
// The rule never skips a record: with the sync s at or below off, the record at s.Upstream was
// written at s.Downstream, so resuming at s.Downstream+1 reads every target record whose
// source record comes after s.Upstream, and off > s.Upstream says the consumer is past that
// one. What it may read again are the source records in (s.Upstream, off): at most
// off-s.Upstream-1 of them, and, with a next sync n above off, at most n.Downstream-s.Downstream-1,
// the target records between the two syncs.
func (s Syncs) Translate(off, lagMax int64) Translation {
	if len(s.list) == 0 {
		return Translation{Class: NoSync, Reason: "no offset sync for this partition: it is not replicated, or MirrorMaker 2 has not synced it yet"}
	}
	// The first sync above off; the one before it, if any, is the latest at or below.
	i := s.above(off)
	if i == 0 {
		first := s.list[0]
		return Translation{Class: BelowFirstSync, Reason: fmt.Sprintf(
			"offset %d is below the first offset sync left (source %d at target %d): where its records went is not known", off, first.Upstream, first.Downstream)}
	}
	at := s.list[i-1]
	if at.Upstream == off {
		return Translation{Class: Exact, Target: at.Downstream}
	}
	reread := off - at.Upstream - 1
	if i < len(s.list) {
		next := s.list[i]
		reread = min(reread, next.Downstream-at.Downstream-1)
	} else if lagMax > 0 && off-at.Upstream > lagMax {
		return Translation{Class: Behind, Reason: fmt.Sprintf(
			"offset %d is %d past the latest offset sync (source %d at target %d), more than offset.lag.max %d: replication has not reached it, or its sync is not written yet",
			off, off-at.Upstream, at.Upstream, at.Downstream, lagMax)}
	}
	return Translation{Class: RoundedDown, Target: at.Downstream + 1, MaxReread: max(reread, 0)}
}

// TranslateReplicated is Translate given also the target partition's log end (the offset of
// its next record): an offset further past the latest sync than lagMax is placed all the same
// when the target holds at least as many records after the sync's as there are source offsets
// between the sync and it. MirrorMaker 2 writes a partition's records in source order, each
// target record after the sync's a later source record, so the last of those records is at or
// past the consumer's last read one: every record before off was replicated, and off is placed
// as any offset past the latest sync is (just past the sync, nothing skipped; MirrorMaker 2's
// syncs lie further apart than offset.lag.max at times, and the lag alone would call such an
// offset behind). Otherwise it stays Behind.
func (s Syncs) TranslateReplicated(off, lagMax, targetEnd int64) Translation {
	tr := s.Translate(off, lagMax)
	if tr.Class != Behind {
		return tr
	}
	at := s.list[len(s.list)-1]
	if held, needed := targetEnd-at.Downstream-1, off-at.Upstream-1; held >= needed {
		return Translation{Class: RoundedDown, Target: at.Downstream + 1, MaxReread: needed}
	}
	return tr
}

// WithCheckpoint refines tr, the syncs' translation of source offset off, with c, MirrorMaker
// 2's latest checkpoint of the consumer group's partition. MirrorMaker 2 checkpoints a group
// whose offsets it finds in the source's __consumer_offsets (a consumer committing to both
// stores, or a copy into the source); the offset-syncs topic is compacted, so the syncs that
// placed the group's offset then may be gone now, and off then lies below the first sync left,
// or far past one.
//
// The checkpoint says the source records from c.Upstream on are at c.Downstream or after it in
// the target. With c.Upstream at or below off, resuming at c.Downstream skips none of the
// records from off on. It is taken only below a sync n above off, and only when c.Downstream
// is not past n.Downstream: the target records from n.Downstream on are the source's from
// n.Upstream on, which the consumer has not read, and a checkpoint past them belongs to another
// replica (the target's topic made again) and is not used. The consumer may then read again at
// most the n.Downstream-c.Downstream target records before n. It replaces tr only where it
// places off higher, or where tr is below the first sync.
func (s Syncs) WithCheckpoint(tr Translation, off int64, c Checkpoint) Translation {
	if tr.Class == Exact || c.Upstream > off || c.Downstream < 0 {
		return tr
	}
	i := s.above(off)
	if i == len(s.list) {
		return tr // no sync above off: nothing bounds what a consumer resumed there reads again
	}
	n := s.list[i]
	if c.Downstream > n.Downstream {
		return tr
	}
	switch tr.Class {
	case BelowFirstSync:
	case RoundedDown:
		if tr.Target >= c.Downstream {
			return tr
		}
		// Resumed later than tr's target, the consumer reads again a part of what tr announced.
		return Translation{Class: FromCheckpoint, Target: c.Downstream, MaxReread: min(tr.MaxReread, n.Downstream-c.Downstream)}
	default:
		return tr
	}
	return Translation{Class: FromCheckpoint, Target: c.Downstream, MaxReread: n.Downstream - c.Downstream}
}
