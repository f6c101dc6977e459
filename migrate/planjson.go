package migrate

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendGroupIndent appends json.MarshalIndent(g, prefix, "  ")'s bytes, written by hand:
// at a million entries a plan file's reflection and re-indentation took longer than reading
// ZooKeeper. TestAppendGroupIndent holds it to MarshalIndent byte for byte; a field added to
// GroupPlan or Entry must be added here too (the test fails until it is).
func appendGroupIndent(b []byte, g GroupPlan, prefix string) ([]byte, error) {
	in1, in2, in3 := prefix+"  ", prefix+"    ", prefix+"      "
	w := &jsonAppender{b: append(b, '{')}
	w.key(in1, "group", false).str(g.Group)
	if g.KafkaGroup != "" {
		w.key(in1, "kafka_group", true).str(g.KafkaGroup)
	}
	w.key(in1, "kafka_state", true).str(g.KafkaState)
	w.key(in1, "kafka_members", true).int(int64(g.KafkaMembers))
	if len(g.LiveConsumers) > 0 {
		w.key(in1, "live_legacy_consumers", true).strs(in1, g.LiveConsumers)
	}
	if len(g.Gates) > 0 {
		gates := make([]string, len(g.Gates))
		for i, x := range g.Gates {
			gates[i] = string(x)
		}
		w.key(in1, "gates", true).strs(in1, gates)
	}
	w.key(in1, "entries", true)
	switch {
	case g.Entries == nil:
		w.raw("null")
	case len(g.Entries) == 0:
		w.raw("[]")
	default:
		w.raw("[")
		for i, e := range g.Entries {
			if i > 0 {
				w.raw(",")
			}
			w.line(in2).raw("{")
			w.entry(in3, e)
			w.line(in2).raw("}")
		}
		w.line(in1).raw("]")
	}
	w.line(prefix).raw("}")
	return w.b, w.err
}

// jsonAppender appends JSON to b, keeping the first error.
type jsonAppender struct {
	b   []byte
	err error
}

func (w *jsonAppender) raw(s string) *jsonAppender { w.b = append(w.b, s...); return w }

// line starts a new line at indent.
func (w *jsonAppender) line(indent string) *jsonAppender {
	w.b = append(append(w.b, '\n'), indent...)
	return w
}

// key starts a field on a new line at indent, after a comma unless it is the object's first.
func (w *jsonAppender) key(indent, name string, comma bool) *jsonAppender {
	if comma {
		w.b = append(w.b, ',')
	}
	w.line(indent)
	w.b = append(append(append(w.b, '"'), name...), `": `...)
	return w
}

func (w *jsonAppender) int(v int64) *jsonAppender { w.b = strconv.AppendInt(w.b, v, 10); return w }

func (w *jsonAppender) intPtr(v *int64) *jsonAppender {
	if v == nil {
		return w.raw("null")
	}
	return w.int(*v)
}

// str appends s as encoding/json quotes it. Names and reasons are almost always printable
// ASCII with nothing to escape, copied as they are; anything else (a quote, a backslash, a
// control byte, <, > or & which encoding/json escapes for HTML, non-ASCII) goes through
// encoding/json itself, so the bytes stay its bytes.
func (w *jsonAppender) str(s string) *jsonAppender {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil && w.err == nil {
				w.err = err
			}
			w.b = append(w.b, q...)
			return w
		}
	}
	w.b = append(append(append(w.b, '"'), s...), '"')
	return w
}

// strs appends a non-empty array of strings as MarshalIndent lays it out at indent.
func (w *jsonAppender) strs(indent string, ss []string) *jsonAppender {
	w.raw("[")
	for i, s := range ss {
		if i > 0 {
			w.raw(",")
		}
		w.line(indent + "  ").str(s)
	}
	return w.line(indent).raw("]")
}

// entry appends an Entry's fields at indent, without its braces.
func (w *jsonAppender) entry(indent string, e Entry) {
	w.key(indent, "topic", false).str(e.Topic)
	w.key(indent, "partition", true).int(int64(e.Partition))
	w.key(indent, "class", true).str(string(e.Class))
	w.key(indent, "action", true).str(string(e.Action))
	w.key(indent, "reason", true).str(e.Reason)
	w.key(indent, "zk_offset", true).intPtr(e.ZK)
	w.key(indent, "kafka_offset", true).intPtr(e.Kafka)
	if e.LogStart != nil {
		w.key(indent, "log_start", true).int(*e.LogStart)
	}
	if e.LogEnd != nil {
		w.key(indent, "log_end", true).int(*e.LogEnd)
	}
	w.key(indent, "target", true).int(e.Target)
	w.key(indent, "znode", true).str(e.Znode)
	mtime, err := e.Mtime.MarshalJSON()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.key(indent, "zk_mtime", true)
	w.b = append(w.b, mtime...)
	if e.Suspect != "" {
		w.key(indent, "suspect", true).str(e.Suspect)
	}
	if s := e.Source; s != nil {
		in := indent + "  "
		w.key(indent, "source", true).raw("{")
		w.key(in, "topic", false).str(s.Topic)
		w.key(in, "offset", true).int(s.Offset)
		w.key(in, "max_reread", true).int(s.MaxReread)
		w.line(indent).raw("}")
	}
}
