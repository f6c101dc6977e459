package migrate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Filter selects the groups and topics a run works on. The zero Filter selects everything.
//
// A group is selected when it is named in Groups or matches GroupRegex (either one is enough;
// with neither set, every group is selected), and it does not match ExcludeGroupRegex: an
// exclusion wins even over an exact name. The regular expressions are Go RE2 syntax and are
// unanchored, as in grep: write ^name$ to match one name exactly.
type Filter struct {
	Groups            []string
	GroupRegex        *regexp.Regexp
	TopicRegex        *regexp.Regexp
	ExcludeGroupRegex *regexp.Regexp
	// GroupMap renames the selected (legacy) groups on their way into Kafka (GroupMap): it is
	// not a selection, but like one it decides what is read (the Kafka groups) and is recorded
	// with it, so a saved plan is checked and executed under the mapping it was made with.
	GroupMap GroupMap
	// AllowEmpty lets a run go on when the selection matches no group (--allow-empty); otherwise
	// that is an error (ErrEmptySelection). It is not part of the selection: Spec leaves it out.
	AllowEmpty bool
}

// FilterSpec is the textual form of a Filter, as given on the command line. It is stored in the
// plan so that copy can read exactly the same selection again and compare fingerprints.
type FilterSpec struct {
	Groups            []string `json:"groups,omitempty"`
	GroupRegex        string   `json:"group_regex,omitempty"`
	TopicRegex        string   `json:"topic_regex,omitempty"`
	ExcludeGroupRegex string   `json:"exclude_group_regex,omitempty"`
	// GroupMap is Filter.GroupMap as pairs sorted by legacy name, the identities left out.
	GroupMap []GroupMapping `json:"group_map,omitempty"`
}

// GroupMapping is one pair of a GroupMap: legacy group Legacy lands in Kafka group Kafka.
type GroupMapping struct {
	Legacy string `json:"legacy"`
	Kafka  string `json:"kafka"`
}

// NewFilter checks and compiles the selection flags. An empty regexp string means "not set".
// Group names are deduplicated and sorted; an empty name is an error.
func NewFilter(groups []string, groupRe, topicRe, excludeRe string) (Filter, error) {
	var f Filter
	for _, g := range groups {
		if g == "" {
			return Filter{}, fmt.Errorf("--group: empty group name")
		}
		f.Groups = append(f.Groups, g)
	}
	slices.Sort(f.Groups)
	f.Groups = slices.Compact(f.Groups)
	var err error
	if f.GroupRegex, err = compileFlag("--group-regex", groupRe); err != nil {
		return Filter{}, err
	}
	if f.TopicRegex, err = compileFlag("--topic-regex", topicRe); err != nil {
		return Filter{}, err
	}
	if f.ExcludeGroupRegex, err = compileFlag("--exclude-group-regex", excludeRe); err != nil {
		return Filter{}, err
	}
	return f, nil
}

// NewFilterFromSpec compiles a stored FilterSpec (e.g. from a plan file), its group map
// checked as --group-map is.
func NewFilterFromSpec(s FilterSpec) (Filter, error) {
	f, err := NewFilter(s.Groups, s.GroupRegex, s.TopicRegex, s.ExcludeGroupRegex)
	if err != nil {
		return Filter{}, err
	}
	if f.GroupMap, err = s.Map(); err != nil {
		return Filter{}, err
	}
	return f, nil
}

// Map is the spec's group map, as a file recorded it: the pairs read back into a GroupMap, in
// legacy name order, each once, checked (nil when none).
func (s FilterSpec) Map() (GroupMap, error) {
	if len(s.GroupMap) == 0 {
		return nil, nil
	}
	m := make(GroupMap, len(s.GroupMap))
	for i, p := range s.GroupMap {
		if i > 0 && p.Legacy <= s.GroupMap[i-1].Legacy {
			return nil, fmt.Errorf("group_map: legacy group %q after %q: the pairs are in legacy name order, each once", p.Legacy, s.GroupMap[i-1].Legacy)
		}
		if p.Legacy == p.Kafka {
			return nil, fmt.Errorf("group_map: legacy group %q maps to itself: an identity is left out", p.Legacy)
		}
		m[p.Legacy] = p.Kafka
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("group_map: %w", err)
	}
	return m, nil
}

// KafkaGroup is the Kafka group legacy group g lands in under the spec's group map.
func (s FilterSpec) KafkaGroup(g string) string {
	i, ok := slices.BinarySearchFunc(s.GroupMap, g, func(p GroupMapping, g string) int { return strings.Compare(p.Legacy, g) })
	if ok {
		return s.GroupMap[i].Kafka
	}
	return g
}

func compileFlag(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid %s %q: %w", flag, expr, err)
	}
	return re, nil
}

// MatchGroup reports whether group g is selected.
func (f Filter) MatchGroup(g string) bool {
	if f.ExcludeGroupRegex != nil && f.ExcludeGroupRegex.MatchString(g) {
		return false
	}
	if len(f.Groups) == 0 && f.GroupRegex == nil {
		return true
	}
	if slices.Contains(f.Groups, g) {
		return true
	}
	return f.GroupRegex != nil && f.GroupRegex.MatchString(g)
}

// MatchTopic reports whether topic t is selected.
func (f Filter) MatchTopic(t string) bool {
	return f.TopicRegex == nil || f.TopicRegex.MatchString(t)
}

// Spec returns the textual form of f, canonical (sorted, deduplicated group names).
func (f Filter) Spec() FilterSpec {
	s := FilterSpec{GroupRegex: reString(f.GroupRegex), TopicRegex: reString(f.TopicRegex),
		ExcludeGroupRegex: reString(f.ExcludeGroupRegex)}
	if len(f.Groups) > 0 {
		s.Groups = slices.Clone(f.Groups)
		slices.Sort(s.Groups)
		s.Groups = slices.Compact(s.Groups)
	}
	for _, l := range slices.Sorted(maps.Keys(f.GroupMap)) {
		if k := f.GroupMap[l]; k != l {
			s.GroupMap = append(s.GroupMap, GroupMapping{Legacy: l, Kafka: k})
		}
	}
	return s
}

func reString(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}
