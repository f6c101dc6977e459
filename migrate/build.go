package migrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Build computes the plan for in under policy p, all but its fingerprint (Fingerprint; the
// planner streams it as it reads): copy's re-check of a batch compares entries and never the
// fingerprint. It is a pure function: it reads nothing but its arguments and writes nothing.
// now stamps Plan.CreatedAt and is the "recent" of a suspect offset (flagSuspect).
//
// An error means the inputs are not a complete, consistent read (a legacy group without Kafka
// state, a topic without a description, a negative Kafka commit or log range): the plan would
// be guessed, so none is returned. Everything about the offsets themselves, however odd, is an
// entry with a class, an action and a reason instead.
func Build(in Inputs, p Policy, now time.Time) (Plan, error) {
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	plan := Plan{
		SchemaVersion: PlanSchemaVersion,
		CreatedAt:     now.UTC(),
		Policy:        p,
		Retention:     Duration(in.Retention),
		Filter:        in.Filter,
		Groups:        []GroupPlan{},
	}
	legacy := slices.Clone(in.Legacy)
	slices.SortFunc(legacy, func(a, b LegacyGroup) int { return cmp.Compare(a.Group, b.Group) })
	gm, err := in.Filter.Map()
	if err != nil {
		return Plan{}, fmt.Errorf("filter: %w", err)
	}
	names := make([]string, 0, len(legacy))
	for _, g := range legacy {
		names = append(names, g.Group)
	}
	merges := newMergeChecker(gm, names)
	for i, g := range legacy {
		if g.Group == "" {
			return Plan{}, fmt.Errorf("legacy group with an empty name")
		}
		if i > 0 && legacy[i-1].Group == g.Group {
			return Plan{}, fmt.Errorf("legacy group %q appears twice in the inputs", g.Group)
		}
		if err := merges.add(g); err != nil {
			return Plan{}, err
		}
		gp, err := buildGroup(g, in, p, now)
		if err != nil {
			return Plan{}, err
		}
		plan.Groups = append(plan.Groups, gp)
	}
	return plan, nil
}

func buildGroup(g LegacyGroup, in Inputs, p Policy, now time.Time) (GroupPlan, error) {
	ks, ok := in.Groups[g.Group]
	if !ok {
		return GroupPlan{}, fmt.Errorf("group %q: no Kafka group state in the inputs (of Kafka group %q)", g.Group, in.Filter.KafkaGroup(g.Group))
	}
	gp := GroupPlan{Group: g.Group, KafkaState: ks.State, KafkaMembers: ks.Members, Entries: []Entry{}}
	if k := in.Filter.KafkaGroup(g.Group); k != g.Group {
		gp.KafkaGroup = k
	}
	if len(g.LiveConsumers) > 0 {
		gp.LiveConsumers = slices.Clone(g.LiveConsumers)
		slices.Sort(gp.LiveConsumers)
		gp.LiveConsumers = slices.Compact(gp.LiveConsumers)
		gp.Gates = append(gp.Gates, GateLegacyConsumersAlive)
	}
	if ks.Active() {
		gp.Gates = append(gp.Gates, GateKafkaGroupActive)
	}
	entries, err := BuildEntries(g.Group, g.Offsets, ks, in.Topics, p)
	if err != nil {
		return GroupPlan{}, err
	}
	gp.Entries = entries
	for i := range gp.Entries {
		flagSuspect(&gp.Entries[i], now)
	}
	if len(gp.Gates) > 0 {
		why := gateBlockPrefix + gateWords(gp, false)
		for i := range gp.Entries {
			if e := &gp.Entries[i]; e.Action == ActionWrite {
				e.Action = ActionBlock
				e.Reason = fmt.Sprintf("%s; would write %d (%s)", why, e.Target, e.Reason)
			}
		}
	}
	return gp, nil
}

// BuildEntries classifies each of a group's legacy offsets against its Kafka commits and the
// topics' log ranges under p, in entry order, without the group's gates: plan and copy apply
// the gates on top (buildGroup), while dual-commit's mirror (package mirror) mirrors while
// legacy consumers run and takes the entries alone, so both decide every partition through
// this one function. topics must describe every topic an offset names; an error means the
// inputs are incomplete or inconsistent, never a partition plan would block.
func BuildEntries(group string, offsets []LegacyOffset, ks GroupState, topics map[string]TopicInfo, p Policy) ([]Entry, error) {
	offsets = sortedOffsets(offsets, compareOffsets)
	entries := make([]Entry, 0, len(offsets))
	// One block for the values every entry points at (ZooKeeper and Kafka offsets, log range):
	// one allocation per group instead of up to three per partition.
	vals := make([]entryValues, len(offsets))
	for i, o := range offsets {
		e, err := buildEntry(o, ks, topics, p, &vals[i])
		if err != nil {
			return nil, fmt.Errorf("group %q topic %q partition %d: %w", group, o.Topic, o.Partition, err)
		}
		if paths := duplicateZnodes(offsets, i); len(paths) > 1 {
			e = invalidEntry(o, fmt.Sprintf("%d znodes name the same partition (%s): fix ZooKeeper first",
				len(paths), strings.Join(paths, ", ")))
		} else if o.Note != "" && o.Invalid == "" {
			e.Reason += "; " + o.Note
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// UsableOffsets reads a group's legacy offsets as BuildEntries does before comparing them with
// Kafka: usable holds each partition's znode with Offset after --offset-adjust (adj); unusable
// names the partitions whose znodes stand for no offset (invalid, two znodes naming one
// partition, or one a Translator could not place), which are never overwritten. Dual-commit's mirror decides its phases from this
// reading, so that it compares the offsets the entries stand for: compared raw, a +1 adjust
// would make Kafka "ahead" after every mirrored write.
func UsableOffsets(offsets []LegacyOffset, adj int64) (usable map[TopicPartition]LegacyOffset, unusable map[TopicPartition]bool) {
	usable, unusable = map[TopicPartition]LegacyOffset{}, map[TopicPartition]bool{}
	offsets = sortedOffsets(offsets, compareOffsets)
	for i, o := range offsets {
		tp := TopicPartition{Topic: o.Topic, Partition: o.Partition}
		zk, bad := usableOffset(o, adj)
		// A translated offset the translator could not place still holds the source's value:
		// compared with the target's commits it would mean nothing.
		if bad != "" || len(duplicateZnodes(offsets, i)) > 1 || (o.Source != nil && o.Source.Blocked != "") {
			unusable[tp] = true
			continue
		}
		o.Offset = zk
		usable[tp] = o
	}
	return usable, unusable
}

func compareOffsets(a, b LegacyOffset) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Path, b.Path))
}

// sortedOffsets returns offsets in the order cmp gives, cloned and sorted only when they are not
// in that order already: the ZooKeeper reader returns them sorted, and the clone was a copy of
// every offset of every group.
func sortedOffsets(offsets []LegacyOffset, cmp func(a, b LegacyOffset) int) []LegacyOffset {
	if slices.IsSortedFunc(offsets, cmp) {
		return offsets
	}
	out := slices.Clone(offsets)
	slices.SortFunc(out, cmp)
	return out
}

// duplicateZnodes returns the znodes of the valid offsets that name the same partition as
// offsets[i], in order; offsets are sorted by compareOffsets, so they are the run of offsets
// around i with its topic and partition. Two znodes for one partition (say "3" and "03") mean
// the store is not what we think: block both. Nil when offsets[i] is the only one.
func duplicateZnodes(offsets []LegacyOffset, i int) []string {
	o := offsets[i]
	lo, hi := i, i+1
	for lo > 0 && offsets[lo-1].Topic == o.Topic && offsets[lo-1].Partition == o.Partition {
		lo--
	}
	for hi < len(offsets) && offsets[hi].Topic == o.Topic && offsets[hi].Partition == o.Partition {
		hi++
	}
	if hi-lo == 1 {
		return nil
	}
	var paths []string
	for _, d := range offsets[lo:hi] {
		if d.Invalid == "" {
			paths = append(paths, d.Path)
		}
	}
	return paths
}

// entryValues holds what an Entry's pointer fields point at.
type entryValues struct {
	zk, kafka int64
	r         PartitionRange
}

func invalidEntry(o LegacyOffset, reason string) Entry {
	return Entry{Topic: o.Topic, Partition: o.Partition, Class: ClassInvalidZnode, Action: ActionBlock,
		Reason: reason, Znode: o.Path, Mtime: o.Mtime}
}

// buildEntry classifies one legacy offset: first whether the znode is usable, then where it
// lies in the partition's log, then how it compares with the Kafka commit.
// v is where the entry's pointer fields point.
func buildEntry(o LegacyOffset, ks GroupState, topics map[string]TopicInfo, p Policy, v *entryValues) (Entry, error) {
	zk, invalid := usableOffset(o, p.OffsetAdjust)
	if invalid != "" {
		e := invalidEntry(o, invalid)
		e.Source = o.Source.entry()
		return e, nil
	}
	if o.Source != nil && p.OffsetAdjust != 0 {
		// The adjust corrects what a legacy client stored in the source's log; added to an
		// offset already translated it would land between the target's records.
		return Entry{}, fmt.Errorf("--offset-adjust %+d cannot be applied to an offset translated into another cluster's log", p.OffsetAdjust)
	}
	v.zk = zk
	e := Entry{Topic: o.Topic, Partition: o.Partition, ZK: &v.zk, Target: zk, Znode: o.Path, Mtime: o.Mtime, Source: o.Source.entry()}
	if k, ok := ks.Committed[TopicPartition{o.Topic, o.Partition}]; ok {
		if k < 0 {
			return Entry{}, fmt.Errorf("kafka commit %d is negative (a partition without a commit must be absent)", k)
		}
		v.kafka = k
		e.Kafka = &v.kafka
	}
	r, ok, err := partitionRange(o, topics, &e)
	if err != nil || !ok {
		return e, err
	}
	v.r = r
	e.LogStart, e.LogEnd = &v.r.LogStart, &v.r.LogEnd
	if s := o.Source; s != nil && s.Blocked != "" {
		e.Class, e.Action, e.Reason = s.Blocked, ActionBlock, fmt.Sprintf("ZooKeeper %d of source topic %q: %s", s.Offset, s.Topic, s.Reason)
		untranslated(&e)
		return e, nil
	}
	var buf [reasonBuf]byte // the reason is built here and copied once into e.Reason
	name := zkName(buf[:0], o.Offset, zk, p.OffsetAdjust)
	if o.Source != nil {
		name = translatedName(buf[:0], *o.Source, zk)
	}
	var oor Class
	switch {
	case zk < r.LogStart:
		oor = ClassBelowLogStart
		name = name.s(" is below log start ").n(r.LogStart)
		e.Target = r.LogStart
	case zk > r.LogEnd:
		oor = ClassAboveLogEnd
		name = name.s(" is above log end ").n(r.LogEnd)
		e.Target = r.LogEnd
	}
	if oor != "" {
		e.Class = oor
		switch p.OutOfRange {
		case RangeFail:
			e.Target = zk
			e.Action, e.Reason = ActionBlock, string(name.s(": --out-of-range=fail"))
			return e, nil
		case RangeSkip:
			e.Target = zk
			e.Action, e.Reason = ActionSkip, string(name.s(": --out-of-range=skip leaves it"))
			return e, nil
		}
		name = name.s(", clamped from ").n(zk).s(" to ").n(e.Target)
	}
	decideConflict(&e, name, p.OnConflict)
	if oor != "" {
		e.Class = oor
	}
	return e, nil
}

// partitionRange is the log range of o's partition in Kafka; ok is false, and e blocked as
// topic-missing or partition-missing, when Kafka does not have it.
func partitionRange(o LegacyOffset, topics map[string]TopicInfo, e *Entry) (PartitionRange, bool, error) {
	ti, ok := topics[o.Topic]
	if !ok {
		return PartitionRange{}, false, fmt.Errorf("no Kafka topic description in the inputs")
	}
	if !ti.Exists {
		e.Class, e.Action = ClassTopicMissing, ActionBlock
		e.Reason = fmt.Sprintf("topic %q does not exist in Kafka", o.Topic)
		if o.Source != nil {
			e.Reason = fmt.Sprintf("topic %q, the target's name for source topic %q, does not exist in the target cluster: "+
				"the topic is not replicated, or the source alias or replication policy does not match MirrorMaker 2's", o.Topic, o.Source.Topic)
		}
		untranslated(e)
		return PartitionRange{}, false, nil
	}
	r, ok := ti.Partitions[o.Partition]
	if !ok {
		e.Class, e.Action = ClassPartitionMissing, ActionBlock
		e.Reason = fmt.Sprintf("topic %q has no partition %d in Kafka (it has %d)", o.Topic, o.Partition, len(ti.Partitions))
		untranslated(e)
		return PartitionRange{}, false, nil
	}
	if r.LogStart < 0 || r.LogEnd < r.LogStart {
		return PartitionRange{}, false, fmt.Errorf("invalid log range: start %d, end %d", r.LogStart, r.LogEnd)
	}
	return r, true, nil
}

// usableOffset is the offset a legacy znode stands for after --offset-adjust, or why it stands
// for none (invalid non-empty): the first step of buildEntry, which UsableOffsets shares.
func usableOffset(o LegacyOffset, adj int64) (zk int64, invalid string) {
	switch {
	case o.Invalid != "":
		return 0, o.Invalid
	case o.Partition < 0:
		return 0, fmt.Sprintf("negative partition %d", o.Partition)
	case o.Offset < 0:
		return 0, fmt.Sprintf("znode holds negative offset %d", o.Offset)
	}
	zk, ok := AdjustOffset(o.Offset, adj)
	if !ok {
		return 0, fmt.Sprintf("znode offset %d with --offset-adjust %+d is not a valid offset (below 0 or overflow)", o.Offset, adj)
	}
	return zk, ""
}

// AdjustOffset applies --offset-adjust; ok is false when the result is negative or overflows.
// Every verb that adjusts (plan, verify, export, restore) goes through it.
func AdjustOffset(off, adj int64) (int64, bool) {
	if adj > 0 && off > math.MaxInt64-adj {
		return 0, false
	}
	v := off + adj
	return v, v >= 0
}
