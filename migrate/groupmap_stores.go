package migrate

import (
	"context"
	"maps"
	"slices"
)

// MapKafka returns k as seen through m: Groups and ActiveGroups take legacy group names and answer each with
// the state, members and commits of the Kafka group it lands in. Topics and the retention are
// k's. A k already mapped is mapped afresh (never twice); with a map that renames nothing, k.
func MapKafka(k KafkaState, m GroupMap) KafkaState {
	if mk, ok := k.(*mappedKafka); ok {
		k = mk.KafkaState
	}
	if !m.Renames() {
		return k
	}
	return &mappedKafka{KafkaState: k, m: m}
}

type mappedKafka struct {
	KafkaState
	m GroupMap
}

func (mk *mappedKafka) Groups(ctx context.Context, groups []string) (map[string]GroupState, error) {
	return mk.mapped(ctx, groups, mk.KafkaState.Groups)
}

func (mk *mappedKafka) ActiveGroups(ctx context.Context, groups []string) (map[string]GroupState, error) {
	return mk.mapped(ctx, groups, mk.KafkaState.ActiveGroups)
}

// mapped asks read about the Kafka groups the legacy groups land in, and answers each legacy
// group with its Kafka group's answer.
func (mk *mappedKafka) mapped(ctx context.Context, groups []string,
	read func(context.Context, []string) (map[string]GroupState, error)) (map[string]GroupState, error) {
	names := make([]string, 0, len(groups))
	for _, g := range groups {
		names = append(names, mk.m.Kafka(g))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	got, err := read(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]GroupState, len(groups))
	for _, g := range groups {
		if st, ok := got[mk.m.Kafka(g)]; ok {
			out[g] = st
		}
	}
	return out, nil
}

// MapCommitter returns c committing each legacy group's offsets into the Kafka group m maps it
// to. A c already mapped is mapped afresh; with a map that renames nothing, c.
func MapCommitter(c OffsetCommitter, m GroupMap) OffsetCommitter {
	if mc, ok := c.(*mappedCommitter); ok {
		c = mc.OffsetCommitter
	}
	if !m.Renames() {
		return c
	}
	return &mappedCommitter{OffsetCommitter: c, m: m}
}

type mappedCommitter struct {
	OffsetCommitter
	m GroupMap
}

func (mc *mappedCommitter) Commit(ctx context.Context, group string, commits []Commit) ([]CommitError, error) {
	return mc.OffsetCommitter.Commit(ctx, mc.m.Kafka(group), commits)
}

// OwnStates returns states (keyed by legacy group, as in.Groups) with, for each legacy group
// merged with others into one Kafka group, the commits of the partitions another of them holds
// left out, and those none of them holds given to the first of them only: what verify compares
// a legacy group with (so that its siblings' partitions are not "missing in ZooKeeper"), and
// what an export --from kafka exports of it.
func (in Inputs) OwnStates(states map[string]GroupState) map[string]GroupState {
	m, _ := in.Filter.Map() // checked when the inputs were read; nil maps nothing
	names := make([]string, 0, len(in.Legacy))
	for _, g := range in.Legacy {
		names = append(names, g.Group)
	}
	into := m.merges(names)
	if len(into) == 0 {
		return states
	}
	held := map[string]map[TopicPartition]string{}
	for _, g := range in.Legacy {
		k := m.Kafka(g.Group)
		if _, ok := into[k]; !ok {
			continue
		}
		if held[k] == nil {
			held[k] = map[TopicPartition]string{}
		}
		for _, o := range g.Offsets {
			held[k][TopicPartition{o.Topic, o.Partition}] = g.Group
		}
	}
	out := maps.Clone(states)
	for _, g := range in.Legacy {
		h := held[m.Kafka(g.Group)]
		if h == nil {
			continue
		}
		st := out[g.Group]
		own := make(map[TopicPartition]int64, len(st.Committed))
		first := into[m.Kafka(g.Group)][0] == g.Group
		for tp, off := range st.Committed {
			if owner, ok := h[tp]; owner == g.Group || (!ok && first) {
				own[tp] = off
			}
		}
		st.Committed = own
		out[g.Group] = st
	}
	return out
}
