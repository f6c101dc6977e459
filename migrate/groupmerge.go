package migrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// legacy groups, sorted.
func (m GroupMap) merges(legacy []string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	into := map[string][]string{}
	for _, g := range legacy {
		k := m.Kafka(g)
		into[k] = append(into[k], g)
	}
	for k, gs := range into {
		if len(gs) < 2 {
			delete(into, k)
		} else {
			slices.Sort(gs)
		}
	}
	return into
}

// CheckNoMerge refuses a map under which two of the legacy groups land in one Kafka group: for
// dual-commit, whose phases and reverse mirror are per group.
func (m GroupMap) CheckNoMerge(legacy []string) error {
	into := m.merges(legacy)
	for _, k := range slices.Sorted(maps.Keys(into)) {
		return fmt.Errorf("group map: legacy groups %s all land in Kafka group %q: dual-commit mirrors one legacy group into one Kafka group "+
			"(copy the merged groups with migrate copy instead)", quoteAll(into[k]), k)
	}
	return nil
}

// checkMergeSelected refuses a selection that takes some of the legacy groups a merge lands in
// one Kafka group, but not all of those listed (all, sorted): the partitions of the ones left
// out could not be checked against the others', and would be found only by a later run, as
// commits of "another writer".
func (m GroupMap) checkMergeSelected(all, selected []string) error {
	if !m.Renames() {
		return nil
	}
	targets := map[string]string{} // Kafka group -> a selected legacy group landing in it
	for _, g := range selected {
		if _, ok := targets[m.Kafka(g)]; !ok {
			targets[m.Kafka(g)] = g
		}
	}
	for _, g := range all {
		k := m.Kafka(g)
		s, ok := targets[k]
		if !ok {
			continue
		}
		if _, sel := slices.BinarySearch(selected, g); !sel {
			return fmt.Errorf("group map: legacy groups %q and %q both land in Kafka group %q, but the selection takes only %q: "+
				"select every legacy group of a merge together, so their partitions can be checked against each other; nothing was read or written",
				s, g, k, s)
		}
	}
	return nil
}

// mergeChecker refuses two legacy groups that land in one Kafka group with the same topic
// partition. It remembers the partitions of merged groups only.
type mergeChecker struct {
	m      GroupMap
	merged map[string]bool                      // Kafka groups with two or more legacy groups
	owner  map[string]map[TopicPartition]string // Kafka group -> partition -> legacy group
}

// newMergeChecker checks the legacy groups (the whole selection) against each other as add is
// given their offsets.
func newMergeChecker(m GroupMap, legacy []string) *mergeChecker {
	c := &mergeChecker{m: m, merged: map[string]bool{}, owner: map[string]map[TopicPartition]string{}}
	for k := range m.merges(legacy) {
		c.merged[k] = true
	}
	return c
}

// add records g's partitions; an error names the first partition another legacy group landing
// in the same Kafka group holds too. An offset of any kind counts, invalid ones included: the
// legacy store then has two claims on the partition.
func (c *mergeChecker) add(g LegacyGroup) error {
	if c == nil || len(c.merged) == 0 {
		return nil
	}
	k := c.m.Kafka(g.Group)
	if !c.merged[k] {
		return nil
	}
	own := c.owner[k]
	if own == nil {
		own = map[TopicPartition]string{}
		c.owner[k] = own
	}
	offsets := slices.Clone(g.Offsets)
	slices.SortFunc(offsets, compareOffsets)
	for _, o := range offsets {
		if o.Topic == "" {
			continue // an unlistable offsets folder names no partition; it blocks its group
		}
		tp := TopicPartition{Topic: o.Topic, Partition: o.Partition}
		if other, ok := own[tp]; ok && other != g.Group {
			a, b := other, g.Group
			if b < a {
				a, b = b, a
			}
			return &MergeOverlapError{Kafka: k, Legacy: [2]string{a, b}, TopicPartition: tp}
		}
		own[tp] = g.Group
	}
	return nil
}

// CheckOverlap refuses two of groups that land in one Kafka group under m and hold the same
// topic partition (MergeOverlapError): for a restore, whose groups come from a file.
func (m GroupMap) CheckOverlap(groups []LegacyGroup) error {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Group
	}
	c := newMergeChecker(m, names)
	for _, g := range groups {
		if err := c.add(g); err != nil {
			return err
		}
	}
	return nil
}

// MergeOverlapError refuses two legacy groups mapped onto one Kafka group that both hold a
// partition: one offset would overwrite the other.
type MergeOverlapError struct {
	Kafka  string
	Legacy [2]string
	TopicPartition
}

func (e *MergeOverlapError) Error() string {
	return fmt.Sprintf("group map: legacy groups %q and %q both land in Kafka group %q and both hold topic %q partition %d: "+
		"one offset would overwrite the other; map them to different Kafka groups, or move one of them; nothing was written",
		e.Legacy[0], e.Legacy[1], e.Kafka, e.Topic, e.Partition)
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
