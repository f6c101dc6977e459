// Package planfile is the plan-file format: a migrate.Plan as JSON, streamed group by group in
// both directions. It reads plan files strictly (every key known, every rule of
// migrate.Plan.Validate held; schema 1 files are upgraded as read) and writes them atomically
// (a temporary file, renamed into place once complete and fsynced). It touches no store.
package planfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/zk2kafka/zk2kafka/internal/strictjson"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// planFieldNames is every JSON field name of the Plan layout: all lower case and distinct, so
// strictjson.CheckKeys then a decode with unknown fields refused reads a plan strictly.
var planFieldNames = strictjson.AllFieldNames(reflect.TypeFor[migrate.Plan]())

// startsWithObject reports whether the first byte other than JSON whitespace is '{'.
func startsWithObject(br *bufio.Reader) bool {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if err != nil || len(b) < n {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
}

// decodeWhole reads a document that is not a JSON object the way a whole plan was always decoded.
func decodeWhole(r io.Reader) (migrate.Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return migrate.Plan{}, fmt.Errorf("read plan: %w", err)
	}
	if err := strictjson.CheckKeys(data, planFieldNames); err != nil {
		return migrate.Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p migrate.Plan
	if err := dec.Decode(&p); err != nil {
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			return migrate.Plan{}, fmt.Errorf("decode plan: empty input")
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return migrate.Plan{}, fmt.Errorf("decode plan: unexpected end of input (a truncated file?)")
		}
		return migrate.Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return migrate.Plan{}, fmt.Errorf("decode plan: after the plan at byte %d: %w", dec.InputOffset(), err)
		}
		return migrate.Plan{}, fmt.Errorf("decode plan: trailing data after the plan at byte %d", dec.InputOffset())
	}
	if err := p.Validate(); err != nil {
		return migrate.Plan{}, err
	}
	return p, nil
}
