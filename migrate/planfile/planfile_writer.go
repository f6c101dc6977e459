package planfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zk2kafka/zk2kafka/internal/durable"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// Writer saves a streamed plan at a path atomically: the groups go to a temporary file
// in the same directory as they come; Commit syncs it, renames it over the path and syncs the
// directory, so a crash or an error leaves either the old file or the whole new plan, never
// half a plan. The bytes are those of EncodePlan for the same plan.
type Writer struct {
	path  string
	tmp   *os.File
	enc   *migrate.GroupsEncoder
	head  migrate.Plan
	order migrate.GroupOrder
	done  bool
}

// Create starts the plan file at path with the plan's head (its fields other than
// Groups and Fingerprint, checked as Validate checks them).
func Create(path string, head migrate.Plan) (*Writer, error) {
	head.Groups, head.Fingerprint = []migrate.GroupPlan{}, ""
	if err := head.ValidateHead(); err != nil {
		return nil, fmt.Errorf("plan file %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("plan file %s: create temporary file: %w", path, err)
	}
	w := &Writer{path: path, tmp: tmp, enc: migrate.NewGroupsEncoder(tmp, 1), head: head,
		order: migrate.GroupOrder{Policy: head.Policy, Filter: head.Filter}}
	if err := w.enc.Begin(head); err != nil {
		return nil, errors.Join(w.fail("write", err), w.Abort())
	}
	return w, nil
}

// Groups appends groups to the plan, each checked as Validate checks it and in name order.
func (w *Writer) Groups(gs []migrate.GroupPlan) error {
	for _, g := range gs {
		if err := w.order.Check(g); err != nil {
			return fmt.Errorf("plan file %s: %w", w.path, err)
		}
		if err := w.enc.Element(g); err != nil {
			return w.fail("write", err)
		}
	}
	return nil
}

// Commit ends the plan with its fingerprint and puts the file in place. After an error the
// temporary file is removed and the path left as it was.
func (w *Writer) Commit(fingerprint string) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, w.Abort())
		}
	}()
	if !migrate.ValidFingerprint(fingerprint) {
		return fmt.Errorf("plan file %s: plan fingerprint %q is not of the form sha256:<64 hex digits>", w.path, fingerprint)
	}
	tail := w.head
	tail.Fingerprint = fingerprint
	if err := w.enc.End(tail); err != nil {
		return w.fail("write", err)
	}
	// CreateTemp makes the file 0600; a plan holds no secret and operators share it for review.
	if err := w.tmp.Chmod(0o644); err != nil {
		return w.fail("chmod", err)
	}
	if err := w.tmp.Sync(); err != nil {
		return w.fail("sync", err)
	}
	w.done = true
	if err := w.tmp.Close(); err != nil {
		return w.fail("close", err)
	}
	if err := os.Rename(w.tmp.Name(), w.path); err != nil {
		return w.fail("rename", err)
	}
	w.tmp = nil
	dir := filepath.Dir(w.path)
	if err := durable.SyncDir(dir); err != nil {
		// The rename happened: the plan is complete at path, but may not survive a power loss.
		return fmt.Errorf("plan file %s: written, but sync of directory %s failed: %w", w.path, dir, err)
	}
	return nil
}

// Abort removes the temporary file; the path is left as it was. It is a no-op once the file
// was renamed into place.
func (w *Writer) Abort() error {
	if w.tmp == nil {
		return nil
	}
	var errs []error
	if !w.done {
		if err := w.tmp.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("close temporary file: %w", err))
		}
	}
	if err := os.Remove(w.tmp.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("remove temporary file: %w", err))
	}
	w.tmp = nil
	return errors.Join(errs...)
}

func (w *Writer) fail(op string, err error) error {
	return fmt.Errorf("plan file %s: %s %s: %w", w.path, op, w.tmp.Name(), err)
}
