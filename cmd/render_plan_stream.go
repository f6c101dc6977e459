package cmd

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// planRenderer writes a streamed plan (migrate.PlanSink) in the chosen format as its groups
// come, so a plan of a million partitions is never held whole: JSON is the document
// writePlanJSON always wrote, byte for byte; CSV the same rows; the table is one table per
// chunk of groups or tableRows rows (a small plan looks as before), the summary after the last.
// "summary" is the per-group view (groupSummary); "auto", the default table, is the table up to
// autoSummaryPartitions partitions (held until the plan ends or passes that size) and the
// per-group view above.
type planRenderer struct {
	w       io.Writer
	format  string
	head    migrate.Plan
	json    *migrate.GroupsEncoder
	csv     *csv.Writer
	gated   []string // the table summary's "Group %q is gated" lines, one per gated group
	rows    int      // the summary's rows (0: every group)
	summary *groupSummary
	pending []migrate.GroupPlan // "auto": the groups so far, while they are few
	parts   int                 // "auto": their partitions
}

func newPlanRenderer(w io.Writer, format string, summaryRows int) *planRenderer {
	r := &planRenderer{w: w, format: format, rows: summaryRows}
	if format == "summary" {
		r.summary = newGroupSummary(summaryRows)
	}
	return r
}

func (r *planRenderer) Head(p migrate.Plan) error {
	r.head = p
	switch r.format {
	case "json":
		r.json = migrate.NewGroupsEncoder(r.w, 1)
		p.Groups, p.Fingerprint = []migrate.GroupPlan{}, ""
		return r.json.Begin(planJSON{Plan: p, Summary: migrate.NewSummary(), Safe: true})
	case "csv":
		r.csv = csv.NewWriter(r.w)
	}
	return nil
}

func (r *planRenderer) Groups(gs []migrate.GroupPlan) error {
	switch r.format {
	case "json":
		for _, g := range gs {
			if err := r.json.Element(g); err != nil {
				return fmt.Errorf("write the plan of group %q: %w", g.Group, err)
			}
		}
		return nil
	case "csv":
		return writeCSVRows(r.csv, gs)
	}
	if r.summary != nil {
		r.summary.add(gs)
		return nil
	}
	if r.format == "auto" {
		r.pending = append(r.pending, gs...)
		for _, g := range gs {
			r.parts += len(g.Entries)
		}
		if r.parts > autoSummaryPartitions {
			r.summary = newGroupSummary(r.rows)
			r.summary.add(r.pending)
			r.pending = nil
		}
		return nil
	}
	return r.tableGroups(gs)
}

// tableGroups writes the groups' rows of the per-partition table.
func (r *planRenderer) tableGroups(gs []migrate.GroupPlan) error {
	for _, g := range gs {
		if len(g.Gates) > 0 {
			r.gated = append(r.gated, fmt.Sprintf("Group %q is gated: %s.\n", g.Group, migrate.GateReason(g)))
		}
	}
	return writeTableRows(r.w, gs, r.head.Cluster != nil && r.head.Cluster.Replication != nil)
}

// End writes what follows the groups, now that the fingerprint and the counts are known.
func (r *planRenderer) End(tail migrate.PlanTail) error {
	p := r.head
	p.Fingerprint = tail.Fingerprint
	switch r.format {
	case "json":
		p.Groups = []migrate.GroupPlan{}
		return r.json.End(planJSON{Plan: p, Summary: tail.Summary, Safe: tail.Safe()})
	case "csv":
		r.csv.Flush()
		return r.csv.Error()
	}
	if r.summary != nil {
		if err := r.summary.render(r.w); err != nil {
			return err
		}
		return writeSummary(r.w, p, tail.Summary, nil)
	}
	if len(r.pending) > 0 {
		if err := r.tableGroups(r.pending); err != nil {
			return err
		}
	}
	return writeSummary(r.w, p, tail.Summary, r.gated)
}

// writeCSVRows writes the groups' writes as group,topic,partition,offset: the file Kafka's
// consumer-groups tool takes with --reset-offsets --from-file.
func writeCSVRows(cw *csv.Writer, gs []migrate.GroupPlan) error {
	for _, g := range gs {
		for _, e := range g.Entries {
			if e.Action != migrate.ActionWrite {
				continue
			}
			if err := cw.Write([]string{g.Kafka(), e.Topic, strconv.Itoa(int(e.Partition)), strconv.FormatInt(e.Target, 10)}); err != nil {
				return err
			}
		}
	}
	return cw.Error()
}

// writeTableRows lists every entry of gs that is not already equal (those are only counted):
// a person reads what needs attention, not 100,000 identical lines. A table holds at most
// tableRows rows before it is written: the table writer keeps every cell until then.
// translated (into a MirrorMaker 2 target) gives every row the source's columns, those of an
// entry that has no source (a znode naming no topic) empty.
func writeTableRows(w io.Writer, gs []migrate.GroupPlan, translated bool) error {
	var t *tablewriter.Table
	rows := 0
	for _, g := range gs {
		for _, e := range g.Entries {
			if e.Class == migrate.ClassEqual {
				continue
			}
			if t == nil {
				t = tablewriter.NewWriter(w)
				t.Header(tableHeader(translated)...)
			}
			if err := t.Append(tableRow(g, e, translated)...); err != nil {
				return err
			}
			if rows++; rows == tableRows {
				if err := t.Render(); err != nil {
					return err
				}
				t, rows = nil, 0
			}
		}
	}
	if t == nil {
		return nil
	}
	return t.Render()
}

// tableHeader is the plan table's header; translated (into a MirrorMaker 2 target) it names
// the source topic and offset beside the target's, and the records a consumer may read again.
func tableHeader(translated bool) []any {
	if translated {
		return []any{"group", "source topic", "topic", "partition", "class", "source zk", "zk", "kafka", "log start", "log end",
			"action", "target", "max reread", "reason"}
	}
	return []any{"group", "topic", "partition", "class", "zk", "kafka", "log start", "log end", "action", "target", "reason"}
}

// tableRow is one entry's row under tableHeader(translated).
func tableRow(g migrate.GroupPlan, e migrate.Entry, translated bool) []any {
	target := ""
	if e.Action == migrate.ActionWrite {
		target = strconv.FormatInt(e.Target, 10)
	}
	if translated {
		topic, reread, zk := "", "", ""
		if s := e.Source; s != nil {
			topic = s.Topic
			if e.ZK != nil {
				reread = strconv.FormatInt(s.MaxReread, 10)
			}
			if e.Class != migrate.ClassInvalidZnode {
				zk = strconv.FormatInt(s.Offset, 10)
			}
		}
		return []any{groupLabel(g.Group, g.KafkaGroup), topic, e.Topic, strconv.Itoa(int(e.Partition)), string(e.Class), zk,
			opt(e.ZK), opt(e.Kafka), opt(e.LogStart), opt(e.LogEnd), string(e.Action), target, reread, e.Reason}
	}
	return []any{groupLabel(g.Group, g.KafkaGroup), e.Topic, strconv.Itoa(int(e.Partition)), string(e.Class), opt(e.ZK), opt(e.Kafka),
		opt(e.LogStart), opt(e.LogEnd), string(e.Action), target, e.Reason}
}
