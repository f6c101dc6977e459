// Package strictjson is zk2kafka's one strict reading of JSON, for every file that decides
// offsets (plan files, export documents, backups): object keys must be exact field names (the
// standard decoder matches them case-insensitively), never repeated in one object (it lets the
// last one win), never unknown; a required key must be present and not null (it reads a null
// number as 0). The known keys come from the Go types, by reflection, never from hand-kept
// lists. It imports only the standard library.
package strictjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// MaxDepth bounds nesting; a plan is five levels deep, anything far deeper is not a document
// of ours.
const MaxDepth = 32

// AllFieldNames returns every JSON field name of t and of the types it nests. When all are lower
// case and distinct, a key that is in this set and accepted by the standard decoder at its
// position (which matches case-insensitively, with DisallowUnknownFields) is exactly the right
// field: CheckKeys over the document, then a decode with unknown fields refused, is strict.
func AllFieldNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	collectFieldNames(t, names, true)
	return names
}

// FieldNames returns the JSON field names of struct type t itself, in field order.
func FieldNames(t reflect.Type) []string {
	names := map[string]bool{}
	var order []string
	collectFieldNames(t, names, false, &order)
	return order
}

func collectFieldNames(t reflect.Type, names map[string]bool, deep bool, order ...*[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	text := reflect.TypeFor[encoding.TextUnmarshaler]()
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(text) {
		return
	}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case f.Anonymous && tag == "":
			collectFieldNames(f.Type, names, deep, order...)
			continue
		case name == "":
			name = f.Name
		}
		if !names[name] && len(order) > 0 {
			*order[0] = append(*order[0], name)
		}
		names[name] = true
		if deep {
			collectFieldNames(f.Type, names, deep)
		}
	}
}

// jsonFrame is one open object or array of the key scan.
type jsonFrame struct {
	object bool
	key    string   // object: the latest key
	seen   []string // object: the keys so far (a plan object has a dozen at most)
	index  int      // array: the current element
}

// CheckKeys scans the object keys of data and rejects keys outside known, keys repeated
// within one object and nesting deeper than MaxDepth. It is a byte scan, not a parse (the
// standard decoder checks the syntax afterwards): strings are skipped whole, so a brace or a
// quote inside one is never structure. A token-by-token json.Decoder walk did the same at a
// third of the speed of the decode itself.
func CheckKeys(data []byte, known map[string]bool) error {
	var stack []jsonFrame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			if len(stack) >= MaxDepth {
				return fmt.Errorf("%s: nested deeper than %d levels", jsonPath(stack), MaxDepth)
			}
			obj := data[i] == '{'
			if len(stack) < cap(stack) { // reuse the seen slice of an earlier frame
				stack = stack[:len(stack)+1]
				top := &stack[len(stack)-1]
				*top = jsonFrame{object: obj, seen: top.seen[:0]}
			} else {
				stack = append(stack, jsonFrame{object: obj})
			}
			expectKey = obj
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				expectKey = top.object
				if !top.object {
					top.index++
				}
			}
		case '"':
			end := stringEnd(data, i)
			if expectKey && len(stack) > 0 {
				if err := checkKey(&stack[len(stack)-1], data[i:end], known, stack); err != nil {
					return err
				}
				expectKey = false
			}
			i = end - 1
		}
	}
	return nil
}

// stringEnd returns the index just past the string that starts with the quote at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

func checkKey(top *jsonFrame, raw []byte, known map[string]bool, stack []jsonFrame) error {
	var key string
	switch {
	case len(raw) < 2 || raw[len(raw)-1] != '"':
		return fmt.Errorf("%s: unexpected end of input in an object key", jsonPath(stack))
	case slices.Contains(raw, '\\'):
		if err := json.Unmarshal(raw, &key); err != nil {
			return fmt.Errorf("%s: bad object key %s: %w", jsonPath(stack), raw, err)
		}
	default:
		key = string(raw[1 : len(raw)-1])
	}
	switch {
	case !known[key]:
		return fmt.Errorf("%s: unknown field %q", jsonPath(stack), key)
	case slices.Contains(top.seen, key):
		return fmt.Errorf("%s: field %q appears twice", jsonPath(stack), key)
	}
	top.seen = append(top.seen, key)
	top.key = key
	return nil
}

// jsonPath names the innermost open value, as $.groups[0].entries[3].
func jsonPath(stack []jsonFrame) string {
	var b strings.Builder
	b.WriteString("$")
	for _, f := range stack[:max(len(stack)-1, 0)] {
		if f.object {
			b.WriteString("." + f.key)
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}
