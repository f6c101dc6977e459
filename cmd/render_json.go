package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// groupsKey is where the groups array sits in the indented planJSON document: a key at the top
// level, at the start of its own line. Inside a JSON string a quote is escaped, so this exact
// text can only be that key.
var groupsKey = []byte("\n  \"groups\": []")

// writePlanJSON writes the same bytes as a json.Encoder with two-space indentation would for
// planJSON, one group at a time: the document around the groups is encoded with no groups, and
// each group is encoded and written on its own, so the output never sits in memory whole (at
// 100k partitions it is tens of MB, and the encoder's buffer doubles while it grows).
func writePlanJSON(w io.Writer, p migrate.Plan) error {
	groups := p.Groups
	doc := planJSON{Plan: p, Summary: p.Summary(), Safe: p.Safe()}
	doc.Groups = []migrate.GroupPlan{}
	head, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	i := bytes.Index(head, groupsKey)
	if i < 0 {
		return fmt.Errorf("encode plan: no groups key in %.80q", head)
	}
	split := i + len(groupsKey) - len("[]")
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:split])
	switch {
	case groups == nil:
		bw.WriteString("null")
	case len(groups) == 0:
		bw.WriteString("[]")
	default:
		bw.WriteString("[\n")
		for i, g := range groups {
			b, err := json.MarshalIndent(g, "    ", "  ")
			if err != nil {
				return fmt.Errorf("encode plan of group %q: %w", g.Group, err)
			}
			bw.WriteString("    ")
			if i < len(groups)-1 {
				b = append(b, ',')
			}
			// bufio's error is sticky: stop at the first failed write (a closed pipe).
			if _, err := bw.Write(append(b, '\n')); err != nil {
				return err
			}
		}
		bw.WriteString("  ]")
	}
	bw.Write(head[split+len("[]"):])
	bw.WriteByte('\n')
	return bw.Flush()
}
