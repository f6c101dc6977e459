package cmd

import (
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// copyJSON is the --output json document of copy.
type copyJSON struct {
	SchemaVersion int                            `json:"schema_version"`
	Fingerprint   string                         `json:"plan_fingerprint"`
	Result        copier.Result                  `json:"result"`
	Counts        map[copier.PartitionStatus]int `json:"counts"`
	PlanSummary   migrate.Summary                `json:"plan_summary"`
}

// copyRenderer writes a copy's results as each group's batch completes: JSON is the document
// one encoder call over the whole result wrote, byte for byte; the table lists a big copy's
// rows in tables of at most tableRows rows, then the counts.
type copyRenderer struct {
	w      io.Writer
	format string
	stats  *copier.PlanStats
	dryRun bool
	counts map[copier.PartitionStatus]int
	json   *migrate.GroupsEncoder
	table  *tablewriter.Table
	rows   int
}

// tableRows bounds the rows a table holds before it is written.
const tableRows = 10000

func newCopyRenderer(w io.Writer, format string, stats *copier.PlanStats, dryRun bool) (*copyRenderer, error) {
	r := &copyRenderer{w: w, format: format, stats: stats, dryRun: dryRun, counts: map[copier.PartitionStatus]int{}}
	if format == "json" {
		r.json = migrate.NewGroupsEncoder(w, 2)
		r.json.NullWhenEmpty() // the result's groups were a nil slice when nothing was planned
		return r, r.json.Begin(r.doc())
	}
	return r, nil
}

func (r *copyRenderer) doc() copyJSON {
	return copyJSON{SchemaVersion: 1, Fingerprint: r.stats.Head.Fingerprint, Counts: r.counts, PlanSummary: r.stats.Summary,
		Result: copier.Result{DryRun: r.dryRun, Groups: []copier.GroupResult{}}}
}

// group writes one group's results.
func (r *copyRenderer) group(g copier.GroupResult) error {
	for _, p := range g.Partitions {
		r.counts[p.Status]++
	}
	if r.json != nil {
		return r.json.Element(g)
	}
	for _, p := range g.Partitions {
		if p.Status == copier.StatusWritten && r.stats.WriteGroups > 20 {
			continue // a big copy lists only what needs a look; the counts say the rest
		}
		if r.table == nil {
			r.table = tablewriter.NewWriter(r.w)
			r.table.Header("group", "topic", "partition", "kafka before", "target", "read back", "status", "reason")
		}
		if err := r.table.Append(groupLabel(g.Group, g.KafkaGroup), p.Topic, strconv.Itoa(int(p.Partition)), opt(p.Before),
			strconv.FormatInt(p.Target, 10), opt(p.ReadBack), string(p.Status), p.Reason); err != nil {
			return err
		}
		if r.rows++; r.rows >= tableRows {
			if err := r.flushTable(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *copyRenderer) flushTable() error {
	t := r.table
	r.table, r.rows = nil, 0
	if t == nil {
		return nil
	}
	return t.Render()
}

// end writes the counts.
func (r *copyRenderer) end() error {
	if r.json != nil {
		return r.json.End(r.doc())
	}
	if err := r.flushTable(); err != nil {
		return err
	}
	n, s := r.counts, r.stats.Summary
	verb := "Copy"
	if r.dryRun {
		verb = "Dry run (nothing written; pass --execute to write)"
	}
	_, err := fmt.Fprintf(r.w, "\n%s: %d written and read back, %d would be written, %d already equal, %d blocked at re-check, %d failed; the plan skipped %d and blocked %d.\n",
		verb, n[copier.StatusWritten], n[copier.StatusWouldWrite], n[copier.StatusAlready], n[copier.StatusBlocked], n[copier.StatusFailed],
		s.ByAction[migrate.ActionSkip], s.ByAction[migrate.ActionBlock])
	return err
}

// groupLabel names a group in a table: "old -> new" when a group map renames the legacy group
// into another Kafka group (kafka empty: not renamed).
func groupLabel(legacy, kafka string) string {
	if kafka == "" || kafka == legacy {
		return legacy
	}
	return legacy + " -> " + kafka
}
