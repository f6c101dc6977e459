package migrate

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// GroupMap renames groups on their way from ZooKeeper into Kafka: legacy group name -> Kafka
// group name (--group-map old=new, --group-map-file). A legacy group it does not name keeps its
// name (the identity). Every verb reads the legacy side under the legacy name (offsets,
// liveness, markers) and the Kafka side under the mapped name (group state, members, commits),
// so the plan, copy, verify, dual-commit, export and restore all follow one mapping.
//
// Rules (Validate):
//   - names are not empty and have no surrounding white space; a legacy name has no "/" (it is a
//     znode name);
//   - a legacy group is mapped once (two different targets are an error; the same pair given
//     twice is one mapping);
//   - no chains: a name the map uses as a Kafka target is not itself mapped elsewhere (a=b with
//     b=c would land a in b and b in c, not a in c as it reads; a swap a=b,b=a is refused too):
//     the map is applied once, never followed;
//   - two legacy groups may land in one Kafka group (a=k with b=k, or a=k while a legacy group
//     "k" exists): a merge. Every verb that reads offsets requires all of a merge's legacy groups
//     in its selection (so that nothing lands in the group unseen) and refuses the run when two
//     of them hold the same topic partition (their offsets would overwrite each other).
//     dual-commit refuses merges altogether.
//
// The zero GroupMap maps nothing.
type GroupMap map[string]string

// Kafka returns the Kafka group legacy group g lands in.
func (m GroupMap) Kafka(g string) string {
	if k, ok := m[g]; ok {
		return k
	}
	return g
}

// String is the map as --group-map values: old=new pairs in legacy name order.
func (m GroupMap) String() string {
	pairs := make([]string, 0, len(m))
	for _, l := range slices.Sorted(maps.Keys(m)) {
		pairs = append(pairs, l+"="+m[l])
	}
	return strings.Join(pairs, ",")
}

// Renames reports whether the map renames any group (an identity entry renames nothing).
func (m GroupMap) Renames() bool {
	for l, k := range m {
		if l != k {
			return true
		}
	}
	return false
}

// Validate checks the rules of GroupMap.
func (m GroupMap) Validate() error {
	for _, l := range slices.Sorted(maps.Keys(m)) {
		k := m[l]
		if err := checkMapName("legacy", l); err != nil {
			return err
		}
		if strings.Contains(l, "/") {
			return fmt.Errorf("legacy group name %q has a \"/\": not a ZooKeeper group", l)
		}
		if err := checkMapName("kafka", k); err != nil {
			return fmt.Errorf("legacy group %q: %w", l, err)
		}
		if next, ok := m[k]; ok && k != l && next != k {
			return fmt.Errorf("legacy group %q maps to %q, which is itself mapped to %q: mappings are not chained "+
				"(map %q=%q directly, or move one group per run)", l, k, next, l, next)
		}
	}
	return nil
}

func checkMapName(side, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty %s group name", side)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%s group name %q has white space around it", side, name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("%s group name %q has a control character", side, name)
	}
	return nil
}

// groupMapBuilder collects mappings from flags and files, refusing a legacy group mapped twice
// to different groups and naming where each came from.
type groupMapBuilder struct {
	m     GroupMap
	where map[string]string
}

func (b *groupMapBuilder) add(legacy, kafka, where string) error {
	if err := checkMapName("legacy", legacy); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := checkMapName("kafka", kafka); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if prev, ok := b.m[legacy]; ok {
		if prev == kafka {
			return nil
		}
		return fmt.Errorf("%s: legacy group %q is mapped twice: to %q here and to %q at %s", where, legacy, kafka, prev, b.where[legacy])
	}
	if b.m == nil {
		b.m, b.where = GroupMap{}, map[string]string{}
	}
	b.m[legacy], b.where[legacy] = kafka, where
	return nil
}

// ParseGroupMap builds a GroupMap from --group-map values (each "old=new", split at the first
// "=") and the content of a --group-map-file (file names it in errors; "" for none), then
// checks it (Validate). The file is CSV, one "old,new" record a line: exactly two fields, no
// header, no white space around a field (quote a name with a comma); blank lines and lines
// starting with "#" are skipped. Errors name the flag value or the file and line at fault.
// A nil map and no error when nothing was given.
func ParseGroupMap(flags []string, file string, content io.Reader) (GroupMap, error) {
	var b groupMapBuilder
	for _, v := range flags {
		l, k, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--group-map %q: expected old=new (the legacy group, then the Kafka group)", v)
		}
		if err := b.add(l, k, fmt.Sprintf("--group-map %q", v)); err != nil {
			return nil, err
		}
	}
	if content != nil {
		if err := parseGroupMapCSV(&b, file, content); err != nil {
			return nil, err
		}
	}
	if err := b.m.Validate(); err != nil {
		return nil, fmt.Errorf("group map: %w", err)
	}
	return b.m, nil
}

func parseGroupMapCSV(b *groupMapBuilder, file string, r io.Reader) error {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1 // counted below, with a clearer message
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("--group-map-file %s: line %d: %v", file, pe.Line, pe.Err)
			}
			return fmt.Errorf("--group-map-file %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		where := fmt.Sprintf("--group-map-file %s: line %d", file, line)
		if len(rec) != 2 {
			return fmt.Errorf("%s: %d field(s), expected 2 (old,new)", where, len(rec))
		}
		if err := b.add(rec[0], rec[1], where); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("--group-map-file %s: no mapping in it", file)
	}
	return nil
}

// merges returns, for each Kafka group that two or more of the legacy groups land in, those
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

// MapKafka returns k as seen through m: Groups takes legacy group names and answers each with
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
	names := make([]string, 0, len(groups))
	for _, g := range groups {
		names = append(names, mk.m.Kafka(g))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	got, err := mk.KafkaState.Groups(ctx, names)
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
