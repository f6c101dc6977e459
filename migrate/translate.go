package migrate

import (
	"context"
	"fmt"
	"slices"
)

// The classes of a legacy offset that could not be placed in the target's log (Translator).
// They are always blocked: no policy makes a guess of where a record went safe.
const (
	// ClassNoSync: MirrorMaker 2 has no offset sync for the source partition: it does not
	// replicate the topic, or has not synced the partition yet.
	ClassNoSync Class = "no-offset-sync"
	// ClassBelowFirstSync: the offset is below the first offset sync left: replication started
	// after it, or older syncs were compacted away; where its records went is not known.
	ClassBelowFirstSync Class = "below-first-sync"
	// ClassReplicationBehind: the offset is further past the latest sync than MirrorMaker 2
	// lets a partition run without a new one: replication has not reached it yet.
	ClassReplicationBehind Class = "replication-behind"
)

// Translator places the legacy store's offsets, which count records of the cluster the znodes
// refer to (the source), in the log of the cluster a plan writes into (the target), when the
// target is another cluster replicating the source (MirrorMaker 2; mm2log implements it from
// the offset syncs). Without one, source and target are one cluster and an offset is itself.
type Translator interface {
	// Topic is the target's name for the source topic (the replication policy's).
	Topic(source string) string
	// Source is the source topic the target topic replicates under the policy; false when the
	// policy maps no source topic to it.
	Source(target string) (string, bool)
	// Translate places group's offset off of the source partition tp in the target's log. It
	// never places it past a record the consumer has not read. The group matters where the
	// replication kept a record of the group's own (MirrorMaker 2's checkpoints).
	Translate(group string, tp TopicPartition, off int64) Placement
}

// Placement is one source offset's place in the target's log.
type Placement struct {
	// Offset is the target offset, when Blocked is empty.
	Offset int64
	// MaxReread is the most records a consumer resumed at Offset may read again (0: exact).
	MaxReread int64
	// Blocked is the class of an offset that could not be placed (ClassNoSync,
	// ClassBelowFirstSync, ClassReplicationBehind), with Reason saying why.
	Blocked Class
	Reason  string
}

// Source is where a translated legacy offset came from: the znode's own topic and offset, in
// the source cluster's log, and what the translation made of it.
type Source struct {
	Topic  string `json:"topic"`
	Offset int64  `json:"offset"`
	// MaxReread is the most records a consumer resumed at the translated offset may read
	// again: what plan announces and an e2e run checks.
	MaxReread int64 `json:"max_reread"`
	// Blocked and Reason are the Placement's when it could not be placed.
	Blocked Class  `json:"-"`
	Reason  string `json:"-"`
}

// entry is the Source as a plan entry keeps it: the blocked class and its reason are the
// entry's own class and reason (and a plan file has no place for them twice).
func (s *Source) entry() *Source {
	if s == nil || (s.Blocked == "" && s.Reason == "") {
		return s // a placed offset's source is the entry's as it is: shared, never changed
	}
	return &Source{Topic: s.Topic, Offset: s.Offset, MaxReread: s.MaxReread}
}

// Translated returns legacy as the target sees it: every offset read (ReadGroups, and
// RecheckGroups when legacy has it) is named by the target's topic, holds the target offset,
// and carries its Source; an offset the translator could not place keeps its source offset
// and carries the class that blocks it (BuildEntries blocks it; verify fails it). A nil tr
// returns legacy itself: the in-place migration. What the store can be asked besides reading
// (SnapshotStore, LegacyRoots) is found through Unwrap.
func Translated(legacy LegacyStore, tr Translator) LegacyStore {
	if tr == nil {
		return legacy
	}
	t := &translatedStore{LegacyStore: legacy, tr: tr}
	if rc, ok := legacy.(LegacyRechecker); ok {
		return &translatedRechecker{translatedStore: t, rc: rc}
	}
	return t
}

type translatedStore struct {
	LegacyStore
	tr Translator
}

// Unwrap is the store read through the translation.
func (t *translatedStore) Unwrap() LegacyStore { return t.LegacyStore }

func (t *translatedStore) ReadGroups(ctx context.Context, groups []string, emit func(LegacyGroup) error) error {
	return t.LegacyStore.ReadGroups(ctx, groups, func(g LegacyGroup) error {
		g.Offsets = translateOffsets(g.Group, g.Offsets, t.tr)
		return emit(g)
	})
}

type translatedRechecker struct {
	*translatedStore
	rc LegacyRechecker
}

// RecheckGroups asks the store for the source topics of the requested target topics, and
// translates what it reads again with the same translator.
func (t *translatedRechecker) RecheckGroups(ctx context.Context, reqs []RecheckRequest) ([]LegacyGroup, error) {
	src := make([]RecheckRequest, len(reqs))
	for i, r := range reqs {
		src[i] = RecheckRequest{Group: r.Group, Offsets: make([]LegacyOffset, len(r.Offsets))}
		for j, o := range r.Offsets {
			topic, ok := t.tr.Source(o.Topic)
			if !ok {
				return nil, fmt.Errorf("group %q znode %s: topic %q names no source topic under the replication policy", r.Group, o.Path, o.Topic)
			}
			o.Topic = topic
			src[i].Offsets[j] = o
		}
	}
	got, err := t.rc.RecheckGroups(ctx, src)
	if err != nil {
		return nil, err
	}
	for i := range got {
		got[i].Offsets = translateOffsets(got[i].Group, got[i].Offsets, t.tr)
	}
	return got, nil
}

// translateOffsets translates group's offsets in place (a store's reader owns what it is
// given), sorted again as LegacyStore promises (a policy that renames topics may change their
// order). The sources are one block per group: one allocation, not one per offset.
func translateOffsets(group string, offsets []LegacyOffset, tr Translator) []LegacyOffset {
	srcs := make([]Source, len(offsets))
	for i, o := range offsets {
		offsets[i] = translateOffset(group, o, tr, &srcs[i])
	}
	if !slices.IsSortedFunc(offsets, compareOffsets) {
		slices.SortFunc(offsets, compareOffsets)
	}
	return offsets
}

// translateOffset translates group's offset o, its Source kept in src.
func translateOffset(group string, o LegacyOffset, tr Translator, src *Source) LegacyOffset {
	if o.Topic == "" {
		// An offsets folder the store could not list names no topic: it stays without one, so
		// that no topic filter drops it and the plan still blocks its group (KeepsOffset).
		return o
	}
	*src = Source{Topic: o.Topic, Offset: o.Offset}
	o.Topic, o.Source = tr.Topic(o.Topic), src
	if o.Invalid != "" || o.Partition < 0 || o.Offset < 0 {
		return o // no offset to place: BuildEntries says why
	}
	p := tr.Translate(group, TopicPartition{Topic: src.Topic, Partition: o.Partition}, o.Offset)
	if p.Blocked != "" {
		src.Blocked, src.Reason = p.Blocked, p.Reason
		return o
	}
	o.Offset, src.MaxReread = p.Offset, p.MaxReread
	return o
}

// unwrapLegacy is a store that wraps another (Translated): the interfaces a caller asks a
// store for besides reading are the wrapped one's.
type unwrapLegacy interface{ Unwrap() LegacyStore }

// innermost is the store under every wrapper (progress, translation).
func innermost(legacy LegacyStore) LegacyStore {
	for {
		switch w := legacy.(type) {
		case *progressLegacy:
			legacy = w.LegacyStore
		case unwrapLegacy:
			legacy = w.Unwrap()
		default:
			return legacy
		}
	}
}

// CommitTopics selects Kafka's commits by the filter's topics: with tr (Kafka is a cluster
// MirrorMaker 2 replicates the znodes' cluster into), by the source topic a commit's topic
// replicates, since the filter names the znodes' topics; a topic that replicates none is then
// not selected by a topic filter. Without a topic filter every commit is, as in place.
func (f Filter) CommitTopics(tr Translator) func(topic string) bool {
	if tr == nil || f.TopicRegex == nil {
		return f.MatchTopic
	}
	return func(topic string) bool {
		src, ok := tr.Source(topic)
		return ok && f.MatchTopic(src)
	}
}
