package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/zk2kafka/zk2kafka/internal/strictjson"
)

// planFieldNames is every JSON field name of the Plan layout: all lower case and distinct, so
// strictjson.CheckKeys then a decode with unknown fields refused reads a plan strictly.
var planFieldNames = strictjson.AllFieldNames(reflect.TypeFor[Plan]())

// EncodePlan writes p as indented JSON after checking it with Validate: a plan that could not
// be read back is never written.
func EncodePlan(w io.Writer, p Plan) error {
	if err := p.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// DecodePlan reads exactly one plan from r, strictly (ScanPlan): field names must match
// exactly (the standard decoder would accept "Action" for "action" and let a repeated key
// silently win), unknown fields, trailing data and any plan Validate rejects are errors.
func DecodePlan(r io.Reader) (Plan, error) {
	var groups []GroupPlan
	p, err := ScanPlan(r, func(g GroupPlan) error { groups = append(groups, g); return nil })
	if err != nil {
		return Plan{}, err
	}
	if p.Groups != nil {
		p.Groups = append(p.Groups, groups...)
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// ReadPlanFile reads and checks the plan saved at path.
func ReadPlanFile(path string) (Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return Plan{}, fmt.Errorf("open plan file: %w", err)
	}
	p, err := DecodePlan(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close plan file %s: %w", path, cerr)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("plan file %s: %w", path, err)
	}
	return p, nil
}

// WritePlanFile saves p at path atomically, as PlanFileWriter does; p is validated whole first.
func WritePlanFile(path string, p Plan) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	w, err := CreatePlanFile(path, p)
	if err != nil {
		return err
	}
	if err := w.Groups(p.Groups); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Commit(p.Fingerprint)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

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

// decodeWhole reads a document that is not a JSON object the way DecodePlan always did.
func decodeWhole(r io.Reader) (Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Plan{}, fmt.Errorf("read plan: %w", err)
	}
	if err := strictjson.CheckKeys(data, planFieldNames); err != nil {
		return Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			return Plan{}, fmt.Errorf("decode plan: empty input")
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return Plan{}, fmt.Errorf("decode plan: unexpected end of input (a truncated file?)")
		}
		return Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return Plan{}, fmt.Errorf("decode plan: after the plan at byte %d: %w", dec.InputOffset(), err)
		}
		return Plan{}, fmt.Errorf("decode plan: trailing data after the plan at byte %d", dec.InputOffset())
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}
