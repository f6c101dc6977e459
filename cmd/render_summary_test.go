package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// manyGroups is n groups of 4 partitions of topic "orders" (log 0..1000) in five kinds, by
// index: equal in both stores; zk-only (written); one partition above the log end (blocked);
// gated by two live legacy consumers (one owning all 4 partitions); a Kafka group with members.
func manyGroups(n int) fakeStores {
	l := migratetest.NewLegacyStore()
	k := migratetest.NewKafkaStore()
	r := migrate.PartitionRange{LogEnd: 1000}
	k.AddTopic("orders", r, r, r, r)
	for i := range n {
		g := fmt.Sprintf("group-%04d", i)
		for p := range int32(4) {
			off := 100*int64(p) + int64(i%7)
			if i%5 == 2 && p == 3 {
				off = 1500
			}
			l.SetOffset(g, "orders", p, off)
			if i%5 == 0 {
				k.SetCommitted(g, "orders", p, off)
			}
		}
		switch i % 5 {
		case 3:
			cid := fmt.Sprintf("%s_host-1700000000000-%08x", g, i)
			l.SetLive(g, "ids/"+cid, "ids/"+cid+"b", "owners/orders/0="+cid+"-0", "owners/orders/1="+cid+"-0",
				"owners/orders/2="+cid+"-1", "owners/orders/3="+cid+"-1")
		case 4:
			k.SetGroup(g, "Stable", 2)
		}
	}
	return fakeStores{legacy: l, kafka: k}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("ZK2KAFKA_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (ZK2KAFKA_UPDATE_GOLDEN=1 rewrites it):\n%s", path, got)
	}
}

// Above 1,000 partitions the default table is the per-group summary: one row per group,
// problems first, a screen of them, totals in the footer.
func TestPlanDefaultTableIsTheSummaryAboveTheThreshold(t *testing.T) {
	out, _, code := run(t, manyGroups(300), "migrate", "plan")
	if code != ExitUnsafe {
		t.Errorf("exit %d, want %d (blocked partitions)", code, ExitUnsafe)
	}
	golden(t, "plan_summary.golden", out)
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("the summary of 300 groups is %d lines: more than a screen", n)
	}
}

func TestPlanSummaryExplicitAndTableExplicit(t *testing.T) {
	stores := manyGroups(300)
	out, _, _ := run(t, stores, "migrate", "plan", "-o", "table")
	if strings.Contains(out, "per-group summary") || !strings.Contains(out, "above-log-end") {
		t.Errorf("-o table is not the partition table:\n%.600s", out)
	}
	t.Run("configured table", func(t *testing.T) {
		t.Setenv("ZK2KAFKA_OUTPUT", "table") // a script that set the table in its environment
		if out, _, _ := run(t, manyGroups(300), "migrate", "plan"); strings.Contains(out, "per-group summary") {
			t.Errorf("ZK2KAFKA_OUTPUT=table gave the summary:\n%.600s", out)
		}
	})
	// A small plan: the table by default, the summary on request, every group with --summary-rows 0.
	out, _, _ = run(t, manyGroups(5), "migrate", "plan")
	if strings.Contains(out, "per-group summary") {
		t.Errorf("a 20-partition plan shows the summary by default:\n%s", out)
	}
	out, _, _ = run(t, manyGroups(5), "migrate", "plan", "-o", "summary", "--summary-rows", "2")
	for _, want := range []string{"20 partitions in 5 groups: per-group summary", "... and 3 more groups"} {
		if !strings.Contains(out, want) {
			t.Errorf("-o summary --summary-rows 2 lacks %q:\n%s", want, out)
		}
	}
	// Blocked on its own first (a decision to make), then the most blocked (a gate).
	rows := summaryRows(out)
	if len(rows) != 2 || !strings.Contains(rows[0], "group-0002") || !strings.Contains(rows[0], "above-log-end 1") ||
		!strings.Contains(rows[1], "group-0003") || !strings.Contains(rows[1], "legacy-consumers-alive: 2 consumers") {
		t.Errorf("rows %q: want group-0002 (above-log-end 1) then group-0003 (2 consumers, not 6 registrations)", rows)
	}
	out, _, _ = run(t, manyGroups(5), "migrate", "plan", "-o", "summary", "--summary-rows", "0")
	if strings.Contains(out, "more groups") || strings.Count(out, "group-00") < 5 || !strings.Contains(out, "kafka-group-active: Stable, 2 members") {
		t.Errorf("--summary-rows 0 does not list every group:\n%s", out)
	}
	if _, errOut, code := run(t, manyGroups(1), "migrate", "plan", "--summary-rows", "-1"); code != ExitError {
		t.Errorf("--summary-rows -1: exit %d, %s", code, errOut)
	}
}

func TestThousands(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {100000, "100,000"}, {-1234567, "-1,234,567"}, {9223372036854775807, "9,223,372,036,854,775,807"}} {
		if got := thousands(tc.n); got != tc.want {
			t.Errorf("thousands(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// summaryRows returns the summary table's group rows, in order.
func summaryRows(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "│ group-") {
			rows = append(rows, l)
		}
	}
	return rows
}

// verify -o summary: one row per group, the failing first, the live consumers counted as
// consumers, totals in the footer.
func TestVerifySummaryGolden(t *testing.T) {
	stores := manyGroups(300)
	out, _, code := run(t, stores, "migrate", "verify", "-o", "summary")
	if code != ExitUnsafe {
		t.Errorf("exit %d, want %d (the stores disagree)", code, ExitUnsafe)
	}
	golden(t, "verify_summary.golden", out)
	out, _, _ = run(t, manyGroups(5), "migrate", "verify", "-o", "summary", "--summary-rows", "0")
	rows := summaryRows(out)
	if len(rows) != 5 || !strings.Contains(rows[4], "group-0000") || !strings.Contains(rows[4], "pass") {
		t.Errorf("rows %q: want 5, the passing group-0000 last", rows)
	}
	if !strings.Contains(out, "missing-in-kafka 4; 2 live legacy consumers") {
		t.Errorf("group-0003's 2 consumers (6 registrations) not counted as 2:\n%s", out)
	}
}
