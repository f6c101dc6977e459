package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// DecodePlan reads exactly one plan from r, strictly: field names must match exactly (the
// standard decoder would accept "Action" for "action" and let a repeated key silently win),
// unknown fields, trailing data and any plan Validate rejects are errors.
func DecodePlan(r io.Reader) (Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Plan{}, fmt.Errorf("read plan: %w", err)
	}
	if err := checkJSONKeys(data, planFieldNames()); err != nil {
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

// WritePlanFile saves p at path atomically: it writes a temporary file in the same directory,
// syncs it, renames it over path and syncs the directory, so a crash leaves either the old file
// or the whole new plan, never half a plan.
func WritePlanFile(path string, p Plan) (err error) {
	var buf bytes.Buffer
	if err := EncodePlan(&buf, p); err != nil {
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("plan file %s: create temporary file: %w", path, err)
	}
	defer func() {
		if err != nil {
			if rerr := os.Remove(tmp.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("remove temporary file: %w", rerr))
			}
		}
	}()
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return errors.Join(fmt.Errorf("plan file %s: write %s: %w", path, tmp.Name(), err), tmp.Close())
	}
	// CreateTemp makes the file 0600; a plan holds no secret and operators share it for review.
	if err := tmp.Chmod(0o644); err != nil {
		return errors.Join(fmt.Errorf("plan file %s: chmod %s: %w", path, tmp.Name(), err), tmp.Close())
	}
	if err := tmp.Sync(); err != nil {
		return errors.Join(fmt.Errorf("plan file %s: sync %s: %w", path, tmp.Name(), err), tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("plan file %s: close %s: %w", path, tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("plan file %s: rename %s: %w", path, tmp.Name(), err)
	}
	if err := syncDir(dir); err != nil {
		// The rename happened: the plan is complete at path, but may not survive a power loss.
		return fmt.Errorf("plan file %s: written, but sync of directory %s failed: %w", path, dir, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
