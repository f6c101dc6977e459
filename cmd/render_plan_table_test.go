package cmd

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Every row of a plan table has its header's columns: a translated plan's rows include those
// of an entry without a source (a znode naming no topic), which had the in-place layout and ran
// out of line with the header.
func TestPlanTableRowsMatchTheHeader(t *testing.T) {
	zk := int64(7)
	gs := []migrate.GroupPlan{{Group: "g", Entries: []migrate.Entry{
		{Topic: "source.orders", Partition: 0, Class: migrate.ClassZKOnly, Action: migrate.ActionWrite, ZK: &zk, Target: 7,
			Source: &migrate.Source{Topic: "orders", Offset: 12, MaxReread: 4}},
		{Topic: "", Partition: -1, Class: migrate.ClassInvalidZnode, Action: migrate.ActionBlock, Reason: "the offsets folder could not be listed"},
	}}}
	for _, translated := range []bool{true, false} {
		var out bytes.Buffer
		if err := writeTableRows(&out, gs, translated); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		cells := func(l string) []string { return strings.Split(l, "│") }
		header := cells(lines[1]) // lines[0] is the top border
		col := slices.IndexFunc(header, func(c string) bool { return strings.TrimSpace(c) == "CLASS" })
		if col < 0 {
			t.Fatalf("no CLASS column:\n%s", &out)
		}
		var classes []string
		for _, l := range lines[2:] {
			if c := cells(l); len(c) > 1 {
				if len(c) != len(header) {
					t.Errorf("translated %v: a row of %d cells under a header of %d:\n%s", translated, len(c), len(header), &out)
					continue
				}
				classes = append(classes, strings.TrimSpace(c[col]))
			}
		}
		if want := []string{"zk-only", "invalid-znode"}; !slices.Equal(classes, want) {
			t.Errorf("translated %v: the CLASS column holds %q, want %q:\n%s", translated, classes, want, &out)
		}
		if translated && !strings.Contains(out.String(), "orders") {
			t.Errorf("the source topic is not shown:\n%s", &out)
		}
	}
}
