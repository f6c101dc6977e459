package cmd

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// planJSON is the --output json document: the plan (the same schema as a saved plan file,
// versioned by schema_version) plus its summary and verdict for scripts.
type planJSON struct {
	migrate.Plan
	Summary migrate.Summary `json:"summary"`
	Safe    bool            `json:"safe"`
}

func renderPlan(w io.Writer, format string, p migrate.Plan) error {
	switch format {
	case "json":
		return writePlanJSON(w, p)
	case "csv":
		return writeResetCSV(w, p)
	default:
		return writePlanTable(w, p)
	}
}

// writeResetCSV writes the plan's writes as group,topic,partition,offset: the file Kafka's
// consumer-groups tool takes with --reset-offsets --from-file.
func writeResetCSV(w io.Writer, p migrate.Plan) error {
	cw := csv.NewWriter(w)
	// The plan's own entries, in plan order (as Plan.Writes lists them), without a copy.
	for _, g := range p.Groups {
		for _, e := range g.Entries {
			if e.Action != migrate.ActionWrite {
				continue
			}
			if err := cw.Write([]string{g.Group, e.Topic, strconv.Itoa(int(e.Partition)), strconv.FormatInt(e.Target, 10)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writePlanTable lists every entry that is not already equal (those are only counted), then
// the summary: a person reads what needs attention, not 100,000 identical lines.
func writePlanTable(w io.Writer, p migrate.Plan) error {
	t := tablewriter.NewWriter(w)
	t.Header("group", "topic", "partition", "class", "zk", "kafka", "log start", "log end", "action", "target", "reason")
	rows := 0
	for _, g := range p.Groups {
		for _, e := range g.Entries {
			if e.Class == migrate.ClassEqual {
				continue
			}
			target := ""
			if e.Action == migrate.ActionWrite {
				target = strconv.FormatInt(e.Target, 10)
			}
			if err := t.Append(g.Group, e.Topic, strconv.Itoa(int(e.Partition)), string(e.Class), opt(e.ZK), opt(e.Kafka),
				opt(e.LogStart), opt(e.LogEnd), string(e.Action), target, e.Reason); err != nil {
				return err
			}
			rows++
		}
	}
	if rows > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	return writePlanSummary(w, p)
}

func writePlanSummary(w io.Writer, p migrate.Plan) error {
	s := p.Summary()
	var b strings.Builder
	fmt.Fprintf(&b, "\nPlan: %d group(s), %d partition(s): %d to write, %d skipped, %d blocked.\n",
		s.Groups, s.Partitions, s.ByAction[migrate.ActionWrite], s.ByAction[migrate.ActionSkip], s.ByAction[migrate.ActionBlock])
	var classes []string
	for _, c := range migrate.Classes() {
		if n := s.ByClass[c]; n > 0 {
			classes = append(classes, fmt.Sprintf("%s %d", c, n))
		}
	}
	if len(classes) > 0 {
		fmt.Fprintf(&b, "Classes: %s.\n", strings.Join(classes, ", "))
	}
	for _, g := range p.Groups {
		for _, gate := range g.Gates {
			fmt.Fprintf(&b, "Group %q is gated: %s.\n", g.Group, gate)
		}
	}
	fmt.Fprintf(&b, "Policy: --on-conflict=%s --out-of-range=%s --offset-adjust=%d.\n",
		p.Policy.OnConflict, p.Policy.OutOfRange, p.Policy.OffsetAdjust)
	if p.Retention > 0 {
		fmt.Fprintf(&b, "Kafka keeps the offsets of an empty group for %s (offsets.retention.minutes) after each commit: copy close to the cutover.\n",
			time.Duration(p.Retention))
	}
	if p.Safe() {
		b.WriteString("The plan is safe to execute.\n")
	} else {
		b.WriteString("The plan is NOT safe to execute: see the blocked entries.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func opt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}
