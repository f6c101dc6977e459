package cmd

import (
	"encoding/json"
	"io"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// writePlanJSON writes the same bytes as a json.Encoder with two-space indentation would for
// planJSON, one group at a time (planRenderer), so the output never sits in memory whole (at
// 100k partitions it is tens of MB, and the encoder's buffer doubles while it grows). A plan
// with nil groups, which Build never returns, is encoded at once: it has no groups to stream.
func writePlanJSON(w io.Writer, p migrate.Plan) error {
	if p.Groups == nil {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(planJSON{Plan: p, Summary: p.Summary(), Safe: p.Safe()})
	}
	return renderPlan(w, "json", p)
}
