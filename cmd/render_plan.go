package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// planJSON is the --output json document: the plan (the same schema as a saved plan file,
// versioned by schema_version) plus its summary and verdict for scripts.
type planJSON struct {
	migrate.Plan
	Summary migrate.Summary `json:"summary"`
	Safe    bool            `json:"safe"`
}

// writeSummary writes the table's closing lines: the counts, the gated groups, the policy.
func writeSummary(w io.Writer, p migrate.Plan, s migrate.Summary, gated []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nPlan: %s group(s), %s partition(s): %s to write, %s skipped, %s blocked.\n",
		thousands(int64(s.Groups)), thousands(int64(s.Partitions)), thousands(int64(s.ByAction[migrate.ActionWrite])),
		thousands(int64(s.ByAction[migrate.ActionSkip])), thousands(int64(s.ByAction[migrate.ActionBlock])))
	var classes []string
	for _, c := range migrate.Classes() {
		if n := s.ByClass[c]; n > 0 {
			classes = append(classes, fmt.Sprintf("%s %s", c, thousands(int64(n))))
		}
	}
	if len(classes) > 0 {
		fmt.Fprintf(&b, "Classes: %s.\n", strings.Join(classes, ", "))
	}
	for _, line := range gated {
		b.WriteString(line)
	}
	if s.Suspect > 0 {
		fmt.Fprintf(&b, "Suspect: %s ZooKeeper offset(s) written within %s of the plan yet more than half the log behind its end: "+
			"flagged, not blocked (a client that rewound, as kafka-node 2.6.1 does against Kafka 3.x, or one re-reading on purpose; "+
			"-o json names them under \"suspect\").\n", thousands(int64(s.Suspect)), humanDuration(migrate.SuspectWindow))
	}
	fmt.Fprintf(&b, "Policy: --on-conflict=%s --out-of-range=%s --offset-adjust=%d.\n",
		p.Policy.OnConflict, p.Policy.OutOfRange, p.Policy.OffsetAdjust)
	if p.Retention > 0 {
		fmt.Fprintf(&b, "Kafka keeps the offsets of an empty group for %s (offsets.retention.minutes) after each commit: copy close to the cutover.\n",
			humanDuration(time.Duration(p.Retention)))
	}
	if s.ByAction[migrate.ActionBlock] == 0 {
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
