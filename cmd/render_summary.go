package cmd

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// autoSummaryPartitions is the size above which plan's default table (--output not given) is the
// per-group summary: a thousand partition rows is about what a person still reads row by row,
// and the summary of a bigger plan fits a screen while the rows would not.
const autoSummaryPartitions = 1000

// defaultSummaryRows is how many groups the summary lists unless --summary-rows says otherwise:
// a screen, with the header, the footer and the closing lines.
const defaultSummaryRows = 30

// groupSummary is the per-group view of a streamed plan: one row per group, problems first
// (summaryOrder), at most limit rows kept (0: every group), and
// totals over every group. Only the rows shown are held: a plan of a million groups keeps
// 2×limit rows.
type groupSummary struct {
	limit  int
	rows   []summaryRow
	total  migrate.GroupCounts // Group unused
	groups int
	gated  int
}

type summaryRow struct {
	migrate.GroupCounts
	blockedBy string // blockedCell
}

func newGroupSummary(limit int) *groupSummary { return &groupSummary{limit: limit} }

// summaryOrder puts the rows a person must read first on top: the groups with the most
// partitions blocked on their own (a decision to make: out of the log, a missing topic...),
// then the most blocked at all (gated groups: consumers to stop), then by name.
func summaryOrder(a, b summaryRow) int {
	return cmp.Or(cmp.Compare(b.OwnBlocks(), a.OwnBlocks()), cmp.Compare(b.Block, a.Block), cmp.Compare(a.Group, b.Group))
}

func (s *groupSummary) add(gs []migrate.GroupPlan) {
	for _, g := range gs {
		c := migrate.CountGroup(g)
		s.groups++
		s.total.Partitions += c.Partitions
		s.total.Write += c.Write
		s.total.Skip += c.Skip
		s.total.Block += c.Block
		s.total.Lag = addLag(s.total.Lag, c.Lag)
		s.total.LagParts += c.LagParts
		r := summaryRow{GroupCounts: c, blockedBy: blockedCell(g, c)}
		if len(g.Gates) > 0 {
			s.gated++
		}
		s.rows = append(s.rows, r)
		if s.limit > 0 && len(s.rows) >= 2*s.limit {
			s.prune()
		}
	}
}

// prune keeps the limit rows that come first.
func (s *groupSummary) prune() {
	slices.SortFunc(s.rows, summaryOrder)
	if s.limit > 0 && len(s.rows) > s.limit {
		clear(s.rows[s.limit:])
		s.rows = s.rows[:s.limit]
	}
}

func addLag(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// render writes the header line, the table with its totals, the line for the groups not
// listed, and the gated groups listed with their reasons (once per group).
func (s *groupSummary) render(w io.Writer) error {
	s.prune()
	var b strings.Builder
	fmt.Fprintf(&b, "%s partitions in %s groups: per-group summary, problems first; -o table for every partition.\n",
		thousands(int64(s.total.Partitions)), thousands(int64(s.groups)))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	right := tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignRight}}
	t := tablewriter.NewTable(w, tablewriter.WithRowAlignmentConfig(right), tablewriter.WithFooterAlignmentConfig(right))
	t.Header("group", "partitions", "write", "skip", "block", "blocked by", "lag")
	for _, r := range s.rows {
		if err := t.Append(r.Group, thousands(int64(r.Partitions)), thousands(int64(r.Write)), thousands(int64(r.Skip)),
			thousands(int64(r.Block)), r.blockedBy, lagText(r.GroupCounts)); err != nil {
			return err
		}
	}
	gated := fmt.Sprintf("%s gated groups", thousands(int64(s.gated)))
	t.Footer(fmt.Sprintf("total: %s groups", thousands(int64(s.groups))), thousands(int64(s.total.Partitions)),
		thousands(int64(s.total.Write)), thousands(int64(s.total.Skip)), thousands(int64(s.total.Block)), gated, lagText(s.total))
	if err := t.Render(); err != nil {
		return err
	}
	b.Reset()
	if more := s.groups - len(s.rows); more > 0 {
		fmt.Fprintf(&b, "... and %s more groups (-o table or -o json for all; --summary-rows 0 lists every group)\n", thousands(int64(more)))
	}
	b.WriteString("Lag: the sum of log end - ZooKeeper offset over each group's partitions that have both. " +
		"Gate: -o table names each gated group's legacy consumers.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// blockedCell says what blocks a group: its gates in a few words each, the legacy consumers
// counted as consumers (migrate.Consumers), not as registrations (the row is the one place the
// summary says them), then the classes of the partitions blocked on their own, with counts.
func blockedCell(g migrate.GroupPlan, c migrate.GroupCounts) string {
	parts := make([]string, 0, len(g.Gates)+len(c.Own))
	for _, gate := range g.Gates {
		switch gate {
		case migrate.GateLegacyConsumersAlive:
			n := len(migrate.Consumers(g.LiveConsumers))
			parts = append(parts, fmt.Sprintf("%s: %d consumer%s", gate, n, map[bool]string{true: "", false: "s"}[n == 1]))
		case migrate.GateKafkaGroupActive:
			state := cmp.Or(g.KafkaState, "unknown")
			parts = append(parts, fmt.Sprintf("%s: %s, %d member%s", gate, state, g.KafkaMembers, map[bool]string{true: "", false: "s"}[g.KafkaMembers == 1]))
		default:
			parts = append(parts, string(gate))
		}
	}
	for _, cl := range migrate.Classes() {
		if n := c.Own[cl]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", cl, thousands(int64(n))))
		}
	}
	return strings.Join(parts, "; ")
}

// lagText is the lag, or "-" when no partition has both a ZooKeeper offset and a log end.
func lagText(c migrate.GroupCounts) string {
	if c.LagParts == 0 {
		return "-"
	}
	return thousands(c.Lag)
}

// thousands writes n with a comma every three digits: 100,000 reads at a glance, 100000 not.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
