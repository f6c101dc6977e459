package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// GroupsEncoder writes the same bytes as json.MarshalIndent(doc, "", "  ") plus a newline, for
// a document with a "groups" array, one element at a time: the document around the array is
// encoded with the array empty, and each element is encoded and written on its own, so the
// document never sits in memory whole (at 1M partitions a plan is about 500 MB of JSON).
//
// Begin writes everything before the array; Element each element; End everything after it,
// from a document that may now carry fields known only at the end (a fingerprint, counts).
// The fields before the array must not change between Begin and End: End checks it.
type GroupsEncoder struct {
	w      *bufio.Writer
	key    []byte // "\n<indent>\"groups\": []"
	prefix string // the indentation of an element
	head   []byte // what Begin wrote
	n      int
	err    error
	empty  string // an array with no element
	buf    []byte // appendGroupIndent's buffer, reused from element to element
}

// NullWhenEmpty makes an array without elements "null", as a nil slice encodes.
func (e *GroupsEncoder) NullWhenEmpty() { e.empty = "null" }

// NewGroupsEncoder writes to w; depth is how deep the groups key is (1: a top-level key,
// 2: a key of a top-level object's value).
func NewGroupsEncoder(w io.Writer, depth int) *GroupsEncoder {
	indent := strings.Repeat("  ", depth)
	return &GroupsEncoder{w: bufio.NewWriterSize(w, 64<<10), key: []byte("\n" + indent + `"groups": []`),
		prefix: indent + "  ", empty: "[]"}
}

// split encodes doc and returns the text before and after its empty groups array. Inside a
// JSON string a quote is escaped, so the key text found can only be the key itself.
func (e *GroupsEncoder) split(doc any) ([]byte, []byte, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode: %w", err)
	}
	i := bytes.Index(b, e.key)
	if i < 0 {
		return nil, nil, fmt.Errorf("encode: no empty groups array in %.80q", b)
	}
	at := i + len(e.key) - len("[]")
	return b[:at], b[at+len("[]"):], nil
}

// Begin writes the document up to its groups array; doc's groups must be empty (not nil).
func (e *GroupsEncoder) Begin(doc any) error {
	head, _, err := e.split(doc)
	if err != nil {
		return err
	}
	e.head = head
	return e.write(head)
}

// Element writes one element of the array. A GroupPlan, a plan file's element, is written by
// appendGroupIndent: the same bytes, without reflection.
func (e *GroupsEncoder) Element(v any) error {
	var b []byte
	var err error
	if g, ok := v.(GroupPlan); ok {
		e.buf, err = appendGroupIndent(e.buf[:0], g, e.prefix)
		b = e.buf
	} else {
		b, err = json.MarshalIndent(v, e.prefix, "  ")
	}
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	sep := ",\n"
	if e.n == 0 {
		sep = "[\n"
	}
	e.n++
	if err := e.write([]byte(sep + e.prefix)); err != nil {
		return err
	}
	return e.write(b)
}

// End closes the array, writes the rest of doc and flushes.
func (e *GroupsEncoder) End(doc any) error {
	head, tail, err := e.split(doc)
	if err != nil {
		return err
	}
	if !bytes.Equal(head, e.head) {
		return fmt.Errorf("encode: the document changed before its groups while they were written")
	}
	closing := e.empty
	if e.n > 0 {
		closing = "\n" + e.prefix[:len(e.prefix)-2] + "]"
	}
	if err := e.write(append([]byte(closing), tail...)); err != nil {
		return err
	}
	if err := e.write([]byte{'\n'}); err != nil {
		return err
	}
	if err := e.w.Flush(); err != nil {
		e.err = err
	}
	return e.err
}

// write keeps the first error: after a failed write (a closed pipe) nothing more is written.
func (e *GroupsEncoder) write(b []byte) error {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
	return e.err
}
