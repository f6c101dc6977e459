package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Marker is the data of a group's cutover marker, /consumers/<group>/zk2kafka-migrated, as
// Run writes it under Mark. Its JSON is a contract (operators and scripts read the znode):
// keep the field names stable.
type Marker struct {
	// MigratedAt is the report's CheckedAt: when the group was found to pass.
	MigratedAt time.Time `json:"migrated_at"`
	// Tool is "zk2kafka <version>" of the run that wrote it.
	Tool string `json:"tool"`
	// Offsets is how many of the group's partitions were compared (all passed).
	Offsets int `json:"offsets"`
}

// markPassed writes the cutover marker of every passing group of r and sets its Marked. A group
// with live legacy consumers is not marked even when it passes: its ZooKeeper offsets may move
// on at once, so it is not done. A group without offsets is not marked: nothing was verified.
// The first failure stops the marking; the groups marked before it stay marked.
func markPassed(ctx context.Context, w migrate.LegacyWriter, tool string, log *slog.Logger, r *Report) error {
	for i := range r.Groups {
		g := &r.Groups[i]
		switch {
		case g.Verdict != VerdictPass:
			continue
		case len(g.LiveConsumers) > 0:
			log.Warn("not marking a group that still has live legacy consumers", "group", g.Group, "live", len(g.LiveConsumers))
			continue
		case len(g.Partitions) == 0:
			log.Warn("not marking a group without offsets: nothing was verified", "group", g.Group)
			continue
		}
		data, err := json.Marshal(Marker{MigratedAt: r.CheckedAt, Tool: tool, Offsets: len(g.Partitions)})
		if err != nil {
			return &MarkError{Group: g.Group, Err: fmt.Errorf("encode the marker: %w", err)}
		}
		if err := w.MarkMigrated(ctx, g.Group, data); err != nil {
			return &MarkError{Group: g.Group, Err: err}
		}
		g.Marked = true
		log.Info("group marked migrated", "group", g.Group, "offsets", len(g.Partitions))
	}
	return nil
}
