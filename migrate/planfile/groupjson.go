package planfile

import (
	"strconv"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// decodeGroup reads one group of a plan file as plan writes it: exact keys, each once, plain
// ASCII strings and whole numbers. It reports false on anything else (an unknown, repeated or
// escaped key, an escaped or non-ASCII string, a number with a fraction or out of range, a
// null where plan never writes one, a syntax error) and the caller then decodes raw the
// strict, standard way, which accepts or refuses it and names why. So decodeGroup never
// decides what a file means; it only reads the common case faster. FuzzDecodeGroup holds it
// to the standard decoder on every input it accepts. A field added to GroupPlan or Entry is
// unknown here until added, and such files then go the slow way (TestDecodeGroupKnowsEveryField
// fails until it is).
func decodeGroup(raw []byte, g *migrate.GroupPlan, names *interned) bool {
	d := groupDecoder{b: raw, names: names}
	ok := d.object(func(key string) bool { return d.groupField(key, g) }) && d.end()
	if !ok {
		*g = migrate.GroupPlan{}
	}
	return ok
}

// interned holds the last value of a few fields that repeat from entry to entry (a group's
// topic, the classes, actions and reasons), so each repeat is not a new string.
type interned struct{ topic, class, action, reason string }

type groupDecoder struct {
	b     []byte
	i     int
	names *interned
}

func (d *groupDecoder) ws() {
	for d.i < len(d.b) && isSpace(d.b[d.i]) {
		d.i++
	}
}

func (d *groupDecoder) byte(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *groupDecoder) end() bool { d.ws(); return d.i == len(d.b) }

// object reads an object, handing each key to field, which reads its value. A key seen twice
// is refused.
func (d *groupDecoder) object(field func(key string) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	var seen []string
	for {
		key, ok := d.plainString()
		if !ok || !d.byte(':') {
			return false
		}
		for _, k := range seen {
			if k == key {
				return false
			}
		}
		seen = append(seen, key)
		if !field(key) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// plainBytes reads a string of printable ASCII without escapes and returns its bytes.
func (d *groupDecoder) plainBytes() ([]byte, bool) {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := d.b[d.i+1 : j]
			d.i = j + 1
			return s, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

func (d *groupDecoder) plainString() (string, bool) {
	b, ok := d.plainBytes()
	return string(b), ok
}

// str reads a string into *v, reusing *last when equal; null leaves *v as it is, as the
// standard decoder does.
func (d *groupDecoder) str(v *string, last *string) bool {
	if d.null() {
		return true
	}
	b, ok := d.plainBytes()
	if !ok {
		return false
	}
	if last == nil {
		*v = string(b)
		return true
	}
	if string(b) != *last {
		*last = string(b)
	}
	*v = *last
	return true
}

func (d *groupDecoder) null() bool {
	d.ws()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// integer reads a JSON number that is a whole number within bits.
func (d *groupDecoder) integer(bits int) (int64, bool) {
	d.ws()
	j := d.i
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	switch {
	case j == digits, d.b[digits] == '0' && j > digits+1:
		return 0, false // no digits, or a leading zero (not JSON)
	case j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E'):
		return 0, false // a fraction or exponent: the standard decoder refuses it for an int
	}
	n, err := strconv.ParseInt(string(d.b[d.i:j]), 10, bits)
	if err != nil {
		return 0, false
	}
	d.i = j
	return n, true
}

// intPtr reads a number into a new *int64, or null as nil.
func (d *groupDecoder) intPtr(v **int64) bool {
	if d.null() {
		*v = nil
		return true
	}
	n, ok := d.integer(64)
	if ok {
		*v = &n
	}
	return ok
}

// strs reads an array of strings; null is a nil slice, [] an empty one.
func (d *groupDecoder) strs(v *[]string) bool {
	if d.null() {
		*v = nil
		return true
	}
	if !d.byte('[') {
		return false
	}
	out := []string{}
	if !d.byte(']') {
		for {
			s, ok := d.plainString()
			if !ok {
				return false
			}
			out = append(out, s)
			if d.byte(']') {
				break
			}
			if !d.byte(',') {
				return false
			}
		}
	}
	*v = out
	return true
}

// groupField reads the value of one of GroupPlan's keys.
func (d *groupDecoder) groupField(key string, g *migrate.GroupPlan) bool {
	switch key {
	case "group":
		return d.str(&g.Group, nil)
	case "kafka_group":
		return d.str(&g.KafkaGroup, nil)
	case "kafka_state":
		return d.str(&g.KafkaState, nil)
	case "kafka_members":
		if d.null() {
			return true
		}
		n, ok := d.integer(strconv.IntSize)
		g.KafkaMembers = int(n)
		return ok
	case "live_legacy_consumers":
		return d.strs(&g.LiveConsumers)
	case "gates":
		var gates []string
		if !d.strs(&gates) {
			return false
		}
		g.Gates = nil
		if gates != nil {
			g.Gates = make([]migrate.Gate, len(gates))
			for i, x := range gates {
				g.Gates[i] = migrate.Gate(x)
			}
		}
		return true
	case "entries":
		return d.entries(&g.Entries)
	}
	return false
}

// entries reads the entries array; null is a nil slice, [] an empty one.
func (d *groupDecoder) entries(v *[]migrate.Entry) bool {
	if d.null() {
		*v = nil
		return true
	}
	if !d.byte('[') {
		return false
	}
	out := []migrate.Entry{}
	if !d.byte(']') {
		for {
			var e migrate.Entry
			if !d.object(func(key string) bool { return d.entryField(key, &e) }) {
				return false
			}
			out = append(out, e)
			if d.byte(']') {
				break
			}
			if !d.byte(',') {
				return false
			}
		}
	}
	*v = out
	return true
}

// entryField reads the value of one of Entry's keys.
func (d *groupDecoder) entryField(key string, e *migrate.Entry) bool {
	switch key {
	case "topic":
		return d.str(&e.Topic, &d.names.topic)
	case "partition":
		if d.null() {
			return true
		}
		n, ok := d.integer(32)
		e.Partition = int32(n)
		return ok
	case "class":
		return d.named(&d.names.class, func(s string) { e.Class = migrate.Class(s) })
	case "action":
		return d.named(&d.names.action, func(s string) { e.Action = migrate.Action(s) })
	case "reason":
		return d.str(&e.Reason, &d.names.reason)
	case "zk_offset":
		return d.intPtr(&e.ZK)
	case "kafka_offset":
		return d.intPtr(&e.Kafka)
	case "log_start":
		return d.intPtr(&e.LogStart)
	case "log_end":
		return d.intPtr(&e.LogEnd)
	case "target":
		if d.null() {
			return true
		}
		n, ok := d.integer(64)
		e.Target = n
		return ok
	case "znode":
		return d.str(&e.Znode, nil)
	case "zk_mtime":
		return d.time(&e.Mtime)
	case "suspect":
		return d.str(&e.Suspect, nil)
	case "source":
		return d.source(&e.Source)
	}
	return false
}

// source reads a translated entry's source (null leaves it nil).
func (d *groupDecoder) source(v **migrate.Source) bool {
	if d.null() {
		*v = nil
		return true
	}
	s := &migrate.Source{}
	if !d.object(func(key string) bool {
		switch key {
		case "topic":
			return d.str(&s.Topic, &d.names.topic)
		case "offset", "max_reread":
			if d.null() {
				return true
			}
			n, ok := d.integer(64)
			if key == "offset" {
				s.Offset = n
			} else {
				s.MaxReread = n
			}
			return ok
		}
		return false
	}) {
		return false
	}
	*v = s
	return true
}

// named reads a string of a named string type through set (null leaves it "", as it was: an
// entry's keys are never repeated).
func (d *groupDecoder) named(last *string, set func(string)) bool {
	var s string
	if !d.str(&s, last) {
		return false
	}
	set(s)
	return true
}

// time reads a timestamp as time.Time's own UnmarshalJSON does; null leaves it zero.
func (d *groupDecoder) time(t *time.Time) bool {
	if d.null() {
		return true
	}
	d.ws()
	start := d.i
	if _, ok := d.plainBytes(); !ok {
		return false
	}
	return t.UnmarshalJSON(d.b[start:d.i]) == nil
}
