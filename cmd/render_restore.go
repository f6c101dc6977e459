package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// restoreJSON is the --output json document of restore.
type restoreJSON struct {
	SchemaVersion int                            `json:"schema_version"`
	File          string                         `json:"file"`
	Backup        string                         `json:"backup,omitempty"`
	Plan          archive.Plan                   `json:"restore"`
	Counts        map[copier.PartitionStatus]int `json:"counts"`
}

// renderRestore writes the restore's outcome. The table lists what the restore changes or
// cannot change (would-write, written, blocked, failed), not the partitions already holding the
// file's offset, which are only counted, unless all; JSON always has every partition.
func renderRestore(w io.Writer, format, file, backup string, p archive.Plan, all bool) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(restoreJSON{SchemaVersion: 1, File: file, Backup: backup, Plan: p, Counts: p.Counts()})
	}
	t := tablewriter.NewWriter(w)
	t.Header("group", "topic", "partition", "line", "current", "restore to", "read back", "status", "reason")
	rows, unlisted := 0, 0
	for _, g := range p.Groups {
		for _, it := range g.Items {
			if !all && it.Status == copier.StatusAlready {
				unlisted++
				continue // a restore of a whole export lists the few partitions it changes
			}
			if !all && it.Status == copier.StatusWritten && len(p.Groups) > 20 {
				continue // a big restore lists only what needs a look; the counts say the rest
			}
			cur := opt(it.Current)
			if it.CurrentInvalid != "" {
				cur = "invalid"
			}
			restoreTo := opt(it.Offset)
			if it.Offset == nil {
				restoreTo = "no commit"
			}
			if err := t.Append(groupLabel(g.Group, g.KafkaGroup), it.Topic, strconv.Itoa(int(it.Partition)), strconv.Itoa(it.Line), cur, restoreTo,
				opt(it.ReadBack), string(it.Status), it.Reason); err != nil {
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
	var b strings.Builder
	n := p.Counts()
	verb := "Restore"
	if p.DryRun {
		verb = "Dry run (nothing written; pass --execute to write)"
	}
	source := ""
	if p.Source != "" {
		source = fmt.Sprintf(", %s offsets", p.Source)
	}
	fmt.Fprintf(&b, "\n%s to %s from %s (%s%s): %d written and read back, %d would be written, %d already equal, %d blocked, %d failed.\n",
		verb, p.Target, file, p.Format, source, n[copier.StatusWritten], n[copier.StatusWouldWrite], n[copier.StatusAlready],
		n[copier.StatusBlocked], n[copier.StatusFailed])
	if unlisted > 0 {
		fmt.Fprintf(&b, "%d partition(s) unchanged: %s already holds the file's offset (not listed; --all lists every partition).\n",
			unlisted, storeName(p.Target))
	}
	for _, g := range p.Groups {
		for _, gate := range g.Gates {
			fmt.Fprintf(&b, "Group %q is gated: %s.\n", g.Group, gate)
		}
	}
	if backup != "" {
		fmt.Fprintf(&b, "What was overwritten is saved in %s (restore it to undo).\n", backup)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func storeName(t archive.Target) string {
	if t == archive.TargetZK {
		return "ZooKeeper"
	}
	return "Kafka"
}
