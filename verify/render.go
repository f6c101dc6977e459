package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// Formats are the report renderings Render knows.
func Formats() []string { return []string{"table", "json", "junit"} }

// Render writes r in format: "table" (for people), "json" (schema_version'ed, for scripts) or
// "junit" (one test case per group, for CI systems).
func Render(w io.Writer, format string, r Report) error {
	switch format {
	case "table":
		return WriteTable(w, r)
	case "json":
		return WriteJSON(w, r)
	case "junit":
		return WriteJUnit(w, r)
	}
	return fmt.Errorf("unknown report format %q, expected one of %v", format, Formats())
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable lists every partition that is not a match (matches are only counted: a person
// reads what needs attention, not 100,000 identical lines), then the verdicts.
func WriteTable(w io.Writer, r Report) error {
	t := tablewriter.NewWriter(w)
	t.Header("group", "topic", "partition", "status", "zk", "kafka", "result", "reason")
	rows := 0
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			if p.Status == StatusMatch {
				continue
			}
			result := "FAIL"
			if p.OK {
				result = "ok"
			}
			if err := t.Append(g.Label(), p.Topic, strconv.Itoa(int(p.Partition)), string(p.Status), opt(p.ZK), opt(p.Kafka), result, p.Reason); err != nil {
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
	_, err := io.WriteString(w, summaryText(r))
	return err
}

func summaryText(r Report) string {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "\nVerify: %d group(s), %d partition(s)", s.Groups, s.Partitions)
	var parts []string
	for _, st := range Statuses() {
		if n := s.ByStatus[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, ".\nGroups: %d passed, %d failed.\n", s.GroupsPassed, s.GroupsFailed)
	for _, g := range r.Groups {
		switch {
		case g.Verdict == VerdictFail:
			fmt.Fprintf(&b, "Group %s FAILS: %s.\n", quoteLabel(g), failureText(g.Failures()))
		case g.Marked:
			fmt.Fprintf(&b, "Group %s passes and is marked migrated in ZooKeeper.\n", quoteLabel(g))
		}
		if len(g.LiveConsumers) > 0 {
			fmt.Fprintf(&b, "Group %q still has %d live legacy consumer(s): its ZooKeeper offsets may still move.\n", g.Group, len(migrate.Consumers(g.LiveConsumers)))
		}
	}
	fmt.Fprintf(&b, "Options: --strict=%t --max-kafka-lead=%s.\n", r.Options.Strict, leadText(r.Options.MaxKafkaLead))
	oor := s.ByStatus[StatusKafkaOutOfRange]
	if oor > 0 {
		fmt.Fprintf(&b, "Kafka holds %d committed offset(s) outside the partition's log (%s): those consumers would reset.\n",
			oor, StatusKafkaOutOfRange)
	}
	switch {
	case r.Pass:
		b.WriteString("The stores agree.\n")
	case s.Failed > oor:
		b.WriteString("The stores DISAGREE: see the failed partitions.\n")
	default:
		b.WriteString("The stores agree, but Kafka's offsets are outside the log: see the failed partitions.\n")
	}
	return b.String()
}

// failureText counts a group's failed partitions: those where the stores disagree, and those
// where Kafka's commit is outside the log (the stores may agree there).
func failureText(fs []Partition) string {
	oor := 0
	for _, p := range fs {
		if p.Status == StatusKafkaOutOfRange {
			oor++
		}
	}
	var parts []string
	if n := len(fs) - oor; n > 0 {
		parts = append(parts, fmt.Sprintf("%d partition(s) disagree", n))
	}
	if oor > 0 {
		parts = append(parts, fmt.Sprintf("%d Kafka offset(s) outside the log", oor))
	}
	return strings.Join(parts, ", ")
}

func leadText(v *int64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(*v, 10)
}

func opt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

// quoteLabel is the group quoted, and the Kafka group it was compared with when a group map
// renames it.
func quoteLabel(g Group) string {
	if g.KafkaGroup == "" {
		return strconv.Quote(g.Group)
	}
	return fmt.Sprintf("%q (Kafka group %q)", g.Group, g.KafkaGroup)
}
