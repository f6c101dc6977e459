package migrate

import (
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
