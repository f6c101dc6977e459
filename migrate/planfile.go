package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

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
