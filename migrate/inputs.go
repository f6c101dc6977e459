package migrate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Inputs is everything a plan is computed from: one consistent read of both stores for the
// selected groups and topics. Build and Fingerprint are pure functions of it.
type Inputs struct {
	// Filter is the selection the inputs were read with; it is recorded in the plan and the
	// fingerprint so a later run can read the same selection again.
	Filter FilterSpec
	Legacy []LegacyGroup
	// Topics must describe every topic named by a valid legacy offset (Exists false when Kafka
	// does not know it); Groups must hold every legacy group (State "" when Kafka does not).
	Topics    map[string]TopicInfo
	Groups    map[string]GroupState
	Retention time.Duration
}

// ReadInputs reads both stores for the groups and topics the filter selects. The Kafka group
// states and commits of the selected groups, and the offsets retention, are read while the
// legacy groups are (they need only the names), then one Kafka topic description for all the
// legacy offsets' topics. Any incomplete answer from a store is an error: a plan must never be
// computed from a partial view, because a missing Kafka commit would look like "zk-only" and be
// overwritten.
//
// Under a group map (Filter.GroupMap), Groups is keyed by the legacy group and holds the Kafka
// group it lands in; legacy groups merged into one Kafka group must all be selected and must
// not share a partition (MergeOverlapError).
func ReadInputs(ctx context.Context, legacy LegacyStore, kafka KafkaState, filter Filter) (Inputs, error) {
	names, err := listSelected(ctx, legacy, filter)
	if err != nil {
		return Inputs{}, err
	}
	kafka = MapKafka(kafka, filter.GroupMap)
	in := Inputs{Filter: filter.Spec(), Topics: map[string]TopicInfo{}, Groups: map[string]GroupState{}}
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kafkaGroups := readKafkaGroups(kctx, kafka, names)
	if in.Legacy, err = readLegacy(ctx, legacy, names, filter); err != nil {
		cancel()
		<-kafkaGroups // no Kafka call outlives ReadInputs
		return Inputs{}, err
	}
	offsets := 0
	merges := newMergeChecker(filter.GroupMap, names)
	for _, g := range in.Legacy {
		offsets += len(g.Offsets)
		if err := merges.add(g); err != nil {
			cancel()
			<-kafkaGroups
			return Inputs{}, err
		}
	}
	if err := checkKept(ctx, legacy, filter, len(names), offsets); err != nil {
		cancel()
		<-kafkaGroups
		return Inputs{}, err
	}
	kg := <-kafkaGroups
	if kg.err != nil {
		return Inputs{}, kg.err
	}
	in.Retention = kg.retention
	if topics := legacyTopics(in.Legacy); len(topics) > 0 {
		// Never call Topics with an empty list: a Kafka metadata request without topics
		// means "all topics", which is both slow and not what was asked.
		if in.Topics, err = kafka.Topics(ctx, topics); err != nil {
			return Inputs{}, fmt.Errorf("describe %d topics in kafka: %w", len(topics), err)
		}
		for _, t := range topics {
			if _, ok := in.Topics[t]; !ok {
				return Inputs{}, fmt.Errorf("describe topic %q in kafka: no answer for it", t)
			}
		}
	}
	// A topic filter may have dropped groups without offsets: keep the states of those left.
	if in.Groups, err = groupStates(in.Legacy, kg.groups); err != nil {
		return Inputs{}, err
	}
	return in, nil
}

// groupStates picks from what Kafka answered the state of every legacy group: a group left
// without an answer is an error, never a guess.
func groupStates(legacy []LegacyGroup, answered map[string]GroupState) (map[string]GroupState, error) {
	out := make(map[string]GroupState, len(legacy))
	for _, g := range legacy {
		st, ok := answered[g.Group]
		if !ok {
			return nil, fmt.Errorf("read group %q from kafka: no answer for it", g.Group)
		}
		out[g.Group] = st
	}
	return out, nil
}

// kafkaGroupsRead is the outcome of readKafkaGroups.
type kafkaGroupsRead struct {
	groups    map[string]GroupState
	retention time.Duration
	err       error
}

// readKafkaGroups reads the groups' Kafka states and the offsets retention in the background;
// the channel yields exactly one result.
func readKafkaGroups(ctx context.Context, kafka KafkaState, names []string) <-chan kafkaGroupsRead {
	out := make(chan kafkaGroupsRead, 1)
	go func() {
		var r kafkaGroupsRead
		if len(names) > 0 {
			if r.groups, r.err = kafka.Groups(ctx, names); r.err != nil {
				r.err = fmt.Errorf("read %d groups from kafka: %w", len(names), r.err)
				out <- r
				return
			}
		}
		if r.retention, r.err = kafka.OffsetsRetention(ctx); r.err != nil {
			r.err = fmt.Errorf("read offsets retention from kafka: %w", r.err)
		}
		out <- r
	}()
	return out
}

// listSelected lists the legacy groups and returns those the filter selects, sorted; a group
// named exactly (--group) must exist, and the selection must not be empty unless the filter
// allows it. It is where every verb that reads offsets selects its groups (dual-commit, which
// waits for groups, selects with SelectGroups): the refusal is a SelectionError.
func listSelected(ctx context.Context, legacy LegacyStore, f Filter) ([]string, error) {
	sel, err := SelectGroups(ctx, legacy, f)
	if err != nil {
		return nil, err
	}
	if len(sel.Missing) > 0 || (len(sel.Groups) == 0 && !f.AllowEmpty) {
		return nil, selectionError(ctx, legacy, f, sel)
	}
	if err := f.GroupMap.checkMergeSelected(sel.all, sel.Groups); err != nil {
		return nil, err
	}
	return sel.Groups, nil
}

// GroupSelection is what a filter selects among the legacy groups as listed now.
type GroupSelection struct {
	Groups []string // selected, sorted
	// Missing are the groups named exactly (--group) that are not under /consumers (yet).
	Missing []string
	// Listed is how many groups are under /consumers, selected or not.
	Listed int
	all    []string // every group listed, sorted
}

// Landing returns every listed group whose Kafka group (under m) is that of a selected group,
// the selected ones included, sorted: the groups a mirror of the selection writes the Kafka
// groups of.
func (s GroupSelection) Landing(m GroupMap) []string {
	into := map[string]bool{}
	for _, g := range s.Groups {
		into[m.Kafka(g)] = true
	}
	var out []string
	for _, g := range s.all {
		if into[m.Kafka(g)] {
			out = append(out, g)
		}
	}
	return out
}

// SelectGroups lists the legacy groups and returns those the filter selects, sorted, and the
// groups named exactly (--group) that are not there. Unlike the verbs that read offsets once,
// it refuses neither: dual-commit waits for the groups to appear.
func SelectGroups(ctx context.Context, legacy LegacyStore, f Filter) (GroupSelection, error) {
	all, err := legacy.ListGroups(ctx)
	if err != nil {
		return GroupSelection{}, fmt.Errorf("list legacy groups: %w", err)
	}
	sel := GroupSelection{Listed: len(all), all: slices.Sorted(slices.Values(all))}
	for _, g := range all {
		if f.MatchGroup(g) {
			sel.Groups = append(sel.Groups, g)
		}
	}
	for _, g := range f.Groups {
		if !slices.Contains(all, g) {
			sel.Missing = append(sel.Missing, g)
		}
	}
	slices.Sort(sel.Groups)
	sel.Groups = slices.Compact(sel.Groups)
	return sel, nil
}

// readLegacy reads the named groups, keeps the offsets of selected topics and returns the
// groups sorted by name. With a topic filter, a group left without offsets is dropped.
func readLegacy(ctx context.Context, legacy LegacyStore, names []string, f Filter) ([]LegacyGroup, error) {
	if len(names) == 0 {
		return nil, nil
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		seen[n] = false
	}
	var out []LegacyGroup
	// The store may call emit from its reader goroutines.
	var mu sync.Mutex
	emit := func(g LegacyGroup) error {
		mu.Lock()
		defer mu.Unlock()
		done, asked := seen[g.Group]
		if !asked {
			return errNotAsked(g.Group)
		}
		if done {
			return errTwice(g.Group)
		}
		seen[g.Group] = true
		if kept, ok := keepGroup(g, f); ok {
			out = append(out, kept)
		}
		return nil
	}
	if err := legacy.ReadGroups(ctx, names, emit); err != nil {
		return nil, fmt.Errorf("read %d legacy groups: %w", len(names), err)
	}
	for _, n := range names {
		if !seen[n] {
			return nil, errNothingFor(n)
		}
	}
	slices.SortFunc(out, func(a, b LegacyGroup) int { return cmp.Compare(a.Group, b.Group) })
	return out, nil
}

// KeepsOffset reports whether the topic filter selects o. An invalid entry that names no topic
// stands for a group's offsets folder the store could not list (ZooKeeper ACL): its topics are
// unknown, so no topic filter can tell they are not selected, and it is kept. Dropped, it took
// the group out of a filtered plan, which then looked clean and copied nothing for it.
// A translated offset (Translated) is selected by its znode's topic: the operator names the
// topics ZooKeeper holds, whatever the target calls them.
func (f Filter) KeepsOffset(o LegacyOffset) bool {
	topic := o.Topic
	if o.Source != nil {
		topic = o.Source.Topic
	}
	return f.MatchTopic(topic) || (o.Topic == "" && o.Invalid != "")
}

// keepGroup is what a plan keeps of a group read: the offsets the filter keeps (KeepsOffset),
// and the liveness (copied: the store's slices are not ours). ok is false for a group a topic
// filter leaves without offsets: it is not part of the plan.
func keepGroup(g LegacyGroup, f Filter) (kept LegacyGroup, ok bool) {
	kept = LegacyGroup{Group: g.Group, LiveConsumers: slices.Clone(g.LiveConsumers)}
	if f.TopicRegex == nil {
		// Every offset is kept: one copy of the right size, not a slice grown append by
		// append (a 100k-offset plan allocated 24 MB a pass in those regrowths).
		if len(g.Offsets) > 0 {
			kept.Offsets = slices.Clone(g.Offsets)
		}
		return kept, true
	}
	for _, o := range g.Offsets {
		if f.KeepsOffset(o) {
			kept.Offsets = append(kept.Offsets, o)
		}
	}
	return kept, len(kept.Offsets) > 0
}

// The completeness checks of a legacy read: a store that answers for a group not asked for,
// twice for one, or not at all for one, is not trusted.
func errNotAsked(group string) error {
	return fmt.Errorf("legacy store returned group %q, which was not asked for", group)
}

func errTwice(group string) error { return fmt.Errorf("legacy store returned group %q twice", group) }

func errNothingFor(group string) error {
	return fmt.Errorf("read legacy group %q: the store returned nothing for it", group)
}

func legacyTopics(groups []LegacyGroup) []string {
	var topics []string
	for _, g := range groups {
		for _, o := range g.Offsets {
			if o.Invalid == "" {
				topics = append(topics, o.Topic)
			}
		}
	}
	slices.Sort(topics)
	return slices.Compact(topics)
}
