package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// copyJSON is the --output json document of copy.
type copyJSON struct {
	SchemaVersion int                             `json:"schema_version"`
	Fingerprint   string                          `json:"plan_fingerprint"`
	Result        migrate.CopyResult              `json:"result"`
	Counts        map[migrate.PartitionStatus]int `json:"counts"`
	PlanSummary   migrate.Summary                 `json:"plan_summary"`
}

func renderCopy(w io.Writer, format string, plan migrate.Plan, res migrate.CopyResult) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(copyJSON{SchemaVersion: 1, Fingerprint: plan.Fingerprint, Result: res, Counts: res.Counts(), PlanSummary: plan.Summary()})
	}
	t := tablewriter.NewWriter(w)
	t.Header("group", "topic", "partition", "kafka before", "target", "read back", "status", "reason")
	rows := 0
	for _, g := range res.Groups {
		for _, p := range g.Partitions {
			if p.Status == migrate.StatusWritten && len(res.Groups) > 20 {
				continue // a big copy lists only what needs a look; the counts say the rest
			}
			if err := t.Append(g.Group, p.Topic, strconv.Itoa(int(p.Partition)), opt(p.Before),
				strconv.FormatInt(p.Target, 10), opt(p.ReadBack), string(p.Status), p.Reason); err != nil {
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
	n := res.Counts()
	s := plan.Summary()
	verb := "Copy"
	if res.DryRun {
		verb = "Dry run (nothing written; pass --execute to write)"
	}
	_, err := fmt.Fprintf(w, "\n%s: %d written and read back, %d would be written, %d already equal, %d blocked at re-check, %d failed; the plan skipped %d and blocked %d.\n",
		verb, n[migrate.StatusWritten], n[migrate.StatusWouldWrite], n[migrate.StatusAlready], n[migrate.StatusBlocked], n[migrate.StatusFailed],
		s.ByAction[migrate.ActionSkip], s.ByAction[migrate.ActionBlock])
	return err
}
