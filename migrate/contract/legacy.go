package contract

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LegacyStoreHarness returns a store over a legacy tree of its own, empty (no /consumers),
// and the means to arrange that tree. It is called once per case; cleanup is its own.
type LegacyStoreHarness func(t *testing.T) (migrate.LegacyStore, Legacy)

// TestLegacyStore runs the migrate.LegacyStore suite on a store of the consumers layout: one
// subtest per clause of its comment (and of LegacyOffset's and LegacyGroup's).
func TestLegacyStore(t *testing.T, h LegacyStoreHarness) { TestLegacyStoreLayout(t, Layout{}, h) }

// TestLegacyStoreLayout runs the migrate.LegacyStore suite on a store whose tree differs from
// the consumers layout as lay says.
func TestLegacyStoreLayout(t *testing.T, lay Layout, h LegacyStoreHarness) {
	g := lay.group()
	cases := []struct {
		clause string
		run    func(t *testing.T, s migrate.LegacyStore, l Legacy)
	}{
		{"ListGroups/no consumers tree lists no groups", func(t *testing.T, s migrate.LegacyStore, _ Legacy) {
			got, err := s.ListGroups(ctx(t))
			if err != nil || len(got) != 0 {
				t.Fatalf("ListGroups of an empty tree = %q, %v; want no groups, no error", got, err)
			}
		}},
		{"ListGroups/every group sorted, with or without offsets", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			if lay.OneGroup != "" {
				l.CreateGroup(t, g) // a group with nothing below it is a group
			} else {
				l.SetOffset(t, "m", "t", 0, 1)
				l.CreateGroup(t, "b") // a group with nothing below it is a group
				l.SetOffset(t, "z", "t", 0, 1)
				l.SetOffset(t, "a", "t", 3, 1)
				l.Register(t, "c", "c1")
			}
			got, err := s.ListGroups(ctx(t))
			if want := lay.listed("a", "b", "c", "m", "z"); err != nil || !slices.Equal(got, want) {
				t.Fatalf("ListGroups = %q, %v; want %q", got, err, want)
			}
		}},
		{"ListGroups/a deleted group is gone", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			kept, gone := "b", "a"
			if lay.OneGroup != "" {
				kept, gone = "", g
			}
			for _, x := range []string{gone, kept} {
				if x != "" {
					l.SetOffset(t, x, "t", 0, 1)
				}
			}
			l.DeleteGroup(t, gone)
			got, err := s.ListGroups(ctx(t))
			var want []string
			if kept != "" {
				want = lay.listed(kept)
			}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("ListGroups after deleting %s = %q, %v; want %q", gone, got, err, kept)
			}
		}},
		{"ListGroups/cancelled context is an error", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			if got, err := s.ListGroups(cancelled()); err == nil {
				t.Fatalf("ListGroups with a cancelled context = %q, no error", got)
			}
		}},
		{"ReadGroups/emits each requested group once and no other", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			asked := []string{"d", "a", "c"}
			for _, x := range []string{"a", "b", "c", "d", g} {
				if lay.holds(x) {
					l.SetOffset(t, x, "t", 0, 1)
				}
			}
			if lay.OneGroup != "" {
				asked = append(asked, g)
			}
			got := readGroups(t, s, asked...)
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, slices.Sorted(slices.Values(asked))) {
				t.Fatalf("emitted %q, want %q", names, asked)
			}
			for name, g := range got {
				if g.Group != name {
					t.Errorf("group %q emitted with Group %q", name, g.Group)
				}
			}
		}},
		{"ReadGroups/valid offsets with topic, partition, path and mtime", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 0)
			l.SetOffset(t, g, "t", 1, 17)
			l.SetOffset(t, g, "u", 5, 1<<40)
			got := readGroups(t, s, g)[g]
			want := []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 0}, {Topic: "t", Partition: 1, Offset: 17}, {Topic: "u", Partition: 5, Offset: 1 << 40}}
			lay.checkOffsets(t, g, got.Offsets, want)
		}},
		{"ReadGroups/a set is seen by the next read", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 5)
			before := readGroups(t, s, g)[g].Offsets
			l.SetOffset(t, g, "t", 0, 9)
			after := readGroups(t, s, g)[g].Offsets
			lay.checkOffsets(t, g, after, []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 9}})
			if len(before) == 1 && len(after) == 1 && after[0].Mtime.Before(before[0].Mtime) {
				t.Errorf("mtime went back from %v to %v after a set", before[0].Mtime, after[0].Mtime)
			}
		}},
		{"ReadGroups/offsets sorted by topic, partition (as numbers), path", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			for _, o := range []struct {
				topic string
				p     int32
			}{{"u", 0}, {"t", 10}, {"t", 2}, {"a", 1}, {"t", 0}} {
				l.SetOffset(t, g, o.topic, o.p, 3)
			}
			got := readGroups(t, s, g)[g].Offsets
			if !slices.IsSortedFunc(got, compareOffsets) || len(got) != 5 {
				t.Fatalf("offsets %s, want all 5 sorted by topic, partition, path", describe(got))
			}
		}},
		{"ReadGroups/a bad znode is reported in Invalid, never as an error", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			for i, bad := range invalidKinds {
				l.SetBad(t, g, "bad", int32(i), bad)
			}
			l.SetOffset(t, g, "good", 0, 7)
			got := readGroups(t, s, g)[g].Offsets
			checkInvalid(t, got, "bad")
			lay.checkOffsets(t, g, only(got, "good"), []migrate.LegacyOffset{{Topic: "good", Partition: 0, Offset: 7}})
		}},
		{"ReadGroups/whitespace around the number is read, with a Note", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetBad(t, g, "t", 0, Padded)
			got := readGroups(t, s, g)[g].Offsets
			if len(got) != 1 || got[0].Invalid != "" || got[0].Offset != PaddedOffset || (got[0].Note == "") != lay.PaddedWithoutNote {
				t.Fatalf("padded znode read as %s, want offset %d, valid, with a Note unless the data is JSON", describe(got), PaddedOffset)
			}
		}},
		{"ReadGroups/a deleted offset znode is absent", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			l.SetOffset(t, g, "t", 1, 2)
			l.DeleteOffset(t, g, "t", 0)
			lay.checkOffsets(t, g, readGroups(t, s, g)[g].Offsets, []migrate.LegacyOffset{{Topic: "t", Partition: 1, Offset: 2}})
		}},
		{"ReadGroups/live consumers are the ids and owners registrations", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			if lay.holds("idle") {
				l.SetOffset(t, "idle", "t", 0, 1)
			}
			leave := lay.register(t, l, g, "c1", tp("t", 0), tp("t", 1))
			got := readGroups(t, s, g, "idle")
			lay.checkLive(t, got[g].LiveConsumers, "c1", tp("t", 0), tp("t", 1))
			if live := got["idle"].LiveConsumers; len(live) != 0 {
				t.Errorf("group without registrations: live %q, want none", live)
			}
			leave()
			lay.checkNoLive(t, readGroups(t, s, g)[g].LiveConsumers, "after the consumer left")
		}},
		{"ReadGroups/a group without offsets is emitted empty", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.CreateGroup(t, g)
			got, ok := readGroups(t, s, g)[g]
			if !ok || len(got.Offsets) != 0 {
				t.Fatalf("group with nothing below it: %+v (emitted %v), want emitted empty", got, ok)
			}
			lay.checkNoLive(t, got.LiveConsumers, "group with nothing below it")
		}},
		{"ReadGroups/a requested group missing from the store is emitted empty", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			l.DeleteGroup(t, g) // deleted between the caller's listing and its read
			got, ok := readGroups(t, s, g)[g]
			if !ok || len(got.Offsets) != 0 {
				t.Fatalf("deleted group: %+v (emitted %v), want emitted empty", got, ok)
			}
			if !lay.FixedLiveness && len(got.LiveConsumers) != 0 {
				t.Errorf("deleted group: live %q, want none", got.LiveConsumers)
			}
		}},
		{"ReadGroups/an error of emit ends the read and is returned", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			for _, x := range []string{"a", "b", "c", g} {
				if lay.holds(x) {
					l.SetOffset(t, x, "t", 0, 1)
				}
			}
			stop := errors.New("emit refuses")
			var mu sync.Mutex
			calls := 0
			err := s.ReadGroups(ctx(t), []string{"a", "b", "c"}, func(migrate.LegacyGroup) error {
				mu.Lock()
				defer mu.Unlock()
				calls++
				return stop
			})
			if !errors.Is(err, stop) {
				t.Fatalf("ReadGroups = %v, want emit's error", err)
			}
			if calls != 1 {
				t.Errorf("emit called %d times after it failed once, want 1", calls)
			}
		}},
		{"ReadGroups/cancelled context is an error", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			if err := s.ReadGroups(cancelled(), []string{g}, func(migrate.LegacyGroup) error { return nil }); err == nil {
				t.Fatal("ReadGroups with a cancelled context: no error")
			}
		}},
		{"ReadGroups/the caller owns what it is given", func(t *testing.T, s migrate.LegacyStore, l Legacy) {
			l.SetOffset(t, g, "t", 0, 1)
			lay.register(t, l, g, "c1")
			first := readGroups(t, s, g)[g]
			first.Offsets[0].Offset = 999
			if len(first.LiveConsumers) > 0 {
				first.LiveConsumers[0] = "changed"
			}
			again := readGroups(t, s, g)[g]
			lay.checkOffsets(t, g, again.Offsets, []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 1}})
			lay.checkLive(t, again.LiveConsumers, "c1")
		}},
	}
	if lay.ReadOnly {
		cases = append(cases, readOnlyCase)
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) {
			s, l := h(t)
			c.run(t, s, l)
		})
	}
}

// readGroups reads groups and returns them by name, failing on an error, a group emitted twice
// or one not asked for.
func readGroups(t *testing.T, s migrate.LegacyStore, groups ...string) map[string]migrate.LegacyGroup {
	t.Helper()
	var mu sync.Mutex // the interface lets emit be called from any goroutine
	got := map[string]migrate.LegacyGroup{}
	err := s.ReadGroups(ctx(t), groups, func(g migrate.LegacyGroup) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[g.Group]; dup {
			return fmt.Errorf("group %q emitted twice", g.Group)
		}
		if !slices.Contains(groups, g.Group) {
			return fmt.Errorf("group %q emitted, not asked for", g.Group)
		}
		got[g.Group] = g
		return nil
	})
	if err != nil {
		t.Fatalf("ReadGroups(%q): %v", groups, err)
	}
	for _, g := range groups {
		if _, ok := got[g]; !ok {
			t.Fatalf("ReadGroups(%q): group %q never emitted", groups, g)
		}
	}
	return got
}

// checkOffsets is Layout.checkOffsets for the consumers layout.
func checkOffsets(t *testing.T, group string, got, want []migrate.LegacyOffset) {
	t.Helper()
	Layout{}.checkOffsets(t, group, got, want)
}

// checkInvalid checks the offsets of topic, one per invalid kind written at partition i, all
// reported with Invalid set and a path of their own.
func checkInvalid(t *testing.T, offsets []migrate.LegacyOffset, topic string) {
	t.Helper()
	bad := only(offsets, topic)
	if len(bad) != len(invalidKinds) {
		t.Fatalf("bad znodes read as %s, want one entry for each of %v", describe(bad), invalidKinds)
	}
	seen := map[string]bool{}
	for _, o := range bad {
		if o.Invalid == "" {
			t.Errorf("znode %s (partition %d) read as valid offset %d, want Invalid set", o.Path, o.Partition, o.Offset)
		}
		if seen[o.Path] || o.Path == "" {
			t.Errorf("znode path %q empty or repeated", o.Path)
		}
		seen[o.Path] = true
	}
	if !slices.ContainsFunc(bad, func(o migrate.LegacyOffset) bool { return o.Partition == -1 }) {
		t.Errorf("no entry with partition -1 for the 0.7-era child name: %s", describe(bad))
	}
}

// checkLive checks a group's registrations stand for exactly consumer id, registered as
// ids/<id> and as the owner of each of owned.
func checkLive(t *testing.T, live []string, id string, owned ...migrate.TopicPartition) {
	t.Helper()
	if got := migrate.Consumers(live); !slices.Equal(got, []string{id}) {
		t.Errorf("live %q stand for consumers %q, want just %q", live, got, id)
	}
	want := []string{"ids/" + id}
	for _, o := range owned {
		want = append(want, fmt.Sprintf("owners/%s/%d=%s-0", o.Topic, o.Partition, id))
	}
	for _, w := range want {
		if !slices.Contains(live, w) {
			t.Errorf("live %q lack the registration %q", live, w)
		}
	}
	if !slices.IsSorted(live) {
		t.Errorf("live %q not sorted", live)
	}
}

func only(offsets []migrate.LegacyOffset, topic string) []migrate.LegacyOffset {
	var out []migrate.LegacyOffset
	for _, o := range offsets {
		if o.Topic == topic {
			out = append(out, o)
		}
	}
	return out
}

func compareOffsets(a, b migrate.LegacyOffset) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Path, b.Path))
}

func describe(offsets []migrate.LegacyOffset) string {
	var b strings.Builder
	b.WriteString("[")
	for i, o := range offsets {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s/%d=%d", o.Topic, o.Partition, o.Offset)
		if o.Invalid != "" {
			fmt.Fprintf(&b, "(invalid: %s)", o.Invalid)
		}
	}
	return b.String() + "]"
}
