package cmd

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/verify"
)

// verifyRow is one group's line of verify's per-group summary.
type verifyRow struct {
	group      string
	partitions int
	failed     int
	verdict    verify.Verdict
	what       string // the failing statuses with counts, and the live legacy consumers
}

// writeVerifySummary is verify -o summary: one row per group, the failing groups first (most
// failed partitions first, then by name), at most rows of them (0: every group), the totals of
// every group in the footer, then the counts and the verdict.
func writeVerifySummary(w io.Writer, r verify.Report, rows int) error {
	all := make([]verifyRow, 0, len(r.Groups))
	for _, g := range r.Groups {
		row := verifyRow{group: g.Label(), partitions: len(g.Partitions), verdict: g.Verdict}
		failing := map[verify.Status]int{}
		for _, p := range g.Partitions {
			if !p.OK {
				row.failed++
				failing[p.Status]++
			}
		}
		var what []string
		for _, st := range verify.Statuses() {
			if n := failing[st]; n > 0 {
				what = append(what, fmt.Sprintf("%s %s", st, thousands(int64(n))))
			}
		}
		if n := len(migrate.Consumers(g.LiveConsumers)); n > 0 {
			what = append(what, fmt.Sprintf("%d live legacy consumer%s", n, map[bool]string{true: "", false: "s"}[n == 1]))
		}
		row.what = strings.Join(what, "; ")
		all = append(all, row)
	}
	slices.SortFunc(all, func(a, b verifyRow) int {
		return cmp.Or(cmp.Compare(b.failed, a.failed), cmp.Compare(a.group, b.group))
	})
	shown := all
	if rows > 0 && len(shown) > rows {
		shown = shown[:rows]
	}
	s := r.Summary
	if _, err := fmt.Fprintf(w, "%s partitions in %s groups: per-group summary, failing groups first; -o table for every partition.\n",
		thousands(int64(s.Partitions)), thousands(int64(s.Groups))); err != nil {
		return err
	}
	align := tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}}
	t := tablewriter.NewTable(w, tablewriter.WithRowAlignmentConfig(align), tablewriter.WithFooterAlignmentConfig(align))
	t.Header("group", "partitions", "ok", "failed", "verdict", "failing")
	for _, row := range shown {
		if err := t.Append(row.group, thousands(int64(row.partitions)), thousands(int64(row.partitions-row.failed)),
			thousands(int64(row.failed)), string(row.verdict), row.what); err != nil {
			return err
		}
	}
	t.Footer(fmt.Sprintf("total: %s groups", thousands(int64(s.Groups))), thousands(int64(s.Partitions)),
		thousands(int64(s.Partitions-s.Failed)), thousands(int64(s.Failed)),
		fmt.Sprintf("%s pass, %s fail", thousands(int64(s.GroupsPassed)), thousands(int64(s.GroupsFailed))), "")
	if err := t.Render(); err != nil {
		return err
	}
	var b strings.Builder
	if more := len(all) - len(shown); more > 0 {
		fmt.Fprintf(&b, "... and %s more groups (-o table or -o json for all; --summary-rows 0 lists every group)\n", thousands(int64(more)))
	}
	var parts []string
	for _, st := range verify.Statuses() {
		if n := s.ByStatus[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", st, thousands(int64(n))))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "Statuses: %s.\n", strings.Join(parts, ", "))
	}
	if r.Pass {
		b.WriteString("The stores agree.\n")
	} else {
		b.WriteString("The stores DISAGREE: see the failing groups.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
