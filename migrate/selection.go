package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrEmptySelection means the selection matched no group in the legacy store. Every verb that
// reads offsets refuses it (unless Filter.AllowEmpty): a plan or a verify of nothing passes, so a
// mistyped regular expression, or a chroot one level off, turned a CI gate green while it checked
// nothing. dual-commit, a service that waits for groups to appear, is the exception.
var ErrEmptySelection = errors.New("the selection matches no group")

// SelectionError is a selection refused before anything is read: groups named by --group that
// are not in the legacy store (ErrGroupNotFound), or no group selected at all (ErrEmptySelection).
type SelectionError struct {
	Filter  FilterSpec
	Root    string   // the folder looked under: "<chroot>/consumers"
	Listed  int      // how many groups are there
	Missing []string // groups named exactly (--group) that are not there
	// Selected is how many groups the selection matched when none of them has an offset (of a
	// topic it selects): the run would still check nothing.
	Selected int
	Nearby   []NearbyRoot // group folders one chroot level off
}

func (e *SelectionError) Unwrap() error {
	if len(e.Missing) > 0 {
		return ErrGroupNotFound
	}
	return ErrEmptySelection
}

func (e *SelectionError) Error() string {
	var b strings.Builder
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "group %q (--group): %s under %s (%s there)", e.Missing[0], ErrGroupNotFound, e.Root, countGroups(e.Listed))
		if n := len(e.Missing) - 1; n > 0 {
			fmt.Fprintf(&b, ", and %d more named group(s) are not there either", n)
		}
	} else if e.Selected > 0 {
		fmt.Fprintf(&b, "the selection (%s) matches %s under %s, none with an offset of a topic it selects", e.Filter.Flags(),
			countGroups(e.Selected), e.Root)
	} else {
		fmt.Fprintf(&b, "the selection (%s) matches no group under %s (%s there)", e.Filter.Flags(), e.Root, countGroups(e.Listed))
	}
	if hint := NearbyHint(e.Nearby); hint != "" {
		b.WriteString("; " + hint)
	}
	if len(e.Missing) == 0 {
		b.WriteString("; nothing was read or written (--allow-empty runs on an empty selection)")
	}
	return b.String()
}

// NearbyHint says which --zk reads the group folders found one chroot level off ("" for none).
func NearbyHint(nearby []NearbyRoot) string {
	var parts []string
	for _, n := range nearby {
		parts = append(parts, fmt.Sprintf("%s holds %s: to read it, use --zk %s", n.Root, countGroups(n.Groups), n.Connect))
	}
	return strings.Join(parts, "; ")
}

func countGroups(n int) string {
	switch n {
	case 0:
		return "no group"
	case 1:
		return "1 group"
	}
	return fmt.Sprintf("%d groups", n)
}

// Flags is the selection as the command-line flags that give it ("every group" for none): it
// names the selection in errors, logs and the dual-commit lease.
func (s FilterSpec) Flags() string {
	var parts []string
	for _, g := range s.Groups {
		parts = append(parts, "--group "+g)
	}
	for _, f := range []struct{ name, v string }{
		{"--group-regex", s.GroupRegex}, {"--topic-regex", s.TopicRegex}, {"--exclude-group-regex", s.ExcludeGroupRegex},
	} {
		if f.v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", f.name, f.v))
		}
	}
	if len(parts) == 0 {
		return "every group"
	}
	return strings.Join(parts, " ")
}

// LocateGroups returns the folder legacy lists groups under and, when it can tell, the group
// folders one chroot level off. A failure to look is no answer, not an error: it is asked only
// to explain another one.
func LocateGroups(ctx context.Context, legacy LegacyStore) (root string, nearby []NearbyRoot) {
	lr, ok := innermost(legacy).(LegacyRoots)
	if !ok {
		return "/consumers", nil
	}
	nearby, err := lr.NearbyRoots(ctx)
	if err != nil {
		nearby = nil
	}
	return lr.GroupsRoot(), nearby
}

// selectionError is the error of a refused selection, with where the groups were looked for.
func selectionError(ctx context.Context, legacy LegacyStore, f Filter, sel GroupSelection) error {
	root, nearby := LocateGroups(ctx, legacy)
	return &SelectionError{Filter: f.Spec(), Root: root, Listed: sel.Listed, Missing: sel.Missing, Nearby: nearby}
}

// checkKept refuses a read in which none of the selected groups has an offset (of a topic the
// filter selects; offsets counts them), unless the filter allows an empty selection: groups
// with only ids/ or owners/, or stale folders one chroot level off, would check nothing too.
func checkKept(ctx context.Context, legacy LegacyStore, f Filter, selected, offsets int) error {
	if offsets > 0 || selected == 0 || f.AllowEmpty {
		return nil
	}
	root, nearby := LocateGroups(ctx, legacy)
	return &SelectionError{Filter: f.Spec(), Root: root, Selected: selected, Nearby: nearby}
}
