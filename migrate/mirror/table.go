package mirror

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// offsetTable is a group's offsets as the loop keeps them between syncs: sorted slices, about
// half a map's memory. Between syncs the loop holds two of them for every watched partition
// (ZooKeeper's last read and Kafka's last acknowledged commit), at a million offsets most of
// its memory; a sync reads a table back into a map.
type offsetTable struct {
	tps  []migrate.TopicPartition
	offs []int64
}

func compareTP(a, b migrate.TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// tableOf is m as a table (nil or empty: the empty table).
func tableOf(m map[migrate.TopicPartition]int64) offsetTable {
	if len(m) == 0 {
		return offsetTable{}
	}
	t := offsetTable{tps: slices.SortedFunc(maps.Keys(m), compareTP), offs: make([]int64, len(m))}
	for i, tp := range t.tps {
		t.offs[i] = m[tp]
	}
	return t
}

// get is tp's offset and whether the table has one.
func (t offsetTable) get(tp migrate.TopicPartition) (int64, bool) {
	i, ok := slices.BinarySearchFunc(t.tps, tp, compareTP)
	if !ok {
		return 0, false
	}
	return t.offs[i], true
}

// toMap is the table as a map the caller owns (nil when empty).
func (t offsetTable) toMap() map[migrate.TopicPartition]int64 {
	if len(t.tps) == 0 {
		return nil
	}
	m := make(map[migrate.TopicPartition]int64, len(t.tps))
	for i, tp := range t.tps {
		m[tp] = t.offs[i]
	}
	return m
}

// equal reports whether the table holds exactly m.
func (t offsetTable) equal(m map[migrate.TopicPartition]int64) bool {
	if len(t.tps) != len(m) {
		return false
	}
	for i, tp := range t.tps {
		if o, ok := m[tp]; !ok || o != t.offs[i] {
			return false
		}
	}
	return true
}

// kafkaSeen is a group's Kafka state as the loop last saw it, with its commits as a table.
type kafkaSeen struct {
	state     string
	members   int
	committed offsetTable
}

func seenOf(s migrate.GroupState) kafkaSeen {
	return kafkaSeen{state: s.State, members: s.Members, committed: tableOf(s.Committed)}
}

// groupState is the state back as the core's type, its commits in a map the caller owns.
func (k kafkaSeen) groupState() migrate.GroupState {
	return migrate.GroupState{State: k.state, Members: k.members, Committed: k.committed.toMap()}
}

// Active is migrate.GroupState.Active.
func (k kafkaSeen) Active() bool {
	return migrate.GroupState{State: k.state, Members: k.members}.Active()
}

// same reports whether a poll's answer b shows the group as last seen: state, members and
// commits.
func (k kafkaSeen) same(b migrate.GroupState) bool {
	return k.state == b.State && k.members == b.Members && k.committed.equal(b.Committed)
}
