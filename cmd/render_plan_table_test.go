package cmd

import (
	"bytes"
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
		cols := strings.Count(lines[1], "│") // lines[0] is the top border
		if want := len(tableHeader(translated)) + 1; cols != want {
			t.Fatalf("translated %v: header line has %d separators, want %d:\n%s", translated, cols, want, &out)
		}
		for _, l := range lines {
			if n := strings.Count(l, "│"); n != 0 && n != cols {
				t.Errorf("translated %v: a row has %d separators, the header %d:\n%s", translated, n, cols, &out)
			}
		}
		if translated && !strings.Contains(out.String(), "orders") {
			t.Errorf("the source topic is not shown:\n%s", &out)
		}
	}
}
