package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// planSource is the plan copy executes, streamed from a file it has already read whole and
// checked (the saved plan, or a fresh plan spilled to a temporary file), with the counts of
// that first read: copy prepares everything before writing anything, without holding the plan.
type planSource struct {
	path  string
	f     *os.File
	info  os.FileInfo // size and mtime when it was checked
	stats *PlanStats
	// remove deletes a temporary plan file's directory on close (nil: the operator's file).
	remove func() error
	// mem holds a small fresh plan's writes instead of a file (f nil).
	mem []migrate.GroupPlan
	// cluster and schema are a saved plan's recorded cluster and schema_version as written.
	cluster *migrate.ClusterIdentity
	schema  int
}

// openPlanSource opens path and remembers its size and mtime.
func openPlanSource(path string) (*planSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open plan file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("plan file %s: %w", path, err), f.Close())
	}
	return &planSource{path: path, f: f, info: info}, nil
}

func (s *planSource) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.remove != nil {
		err = errors.Join(err, s.remove())
	}
	return err
}

// rewind puts the file back at its start for another read.
func (s *planSource) rewind() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("plan file %s: %w", s.path, err)
	}
	return nil
}

// unchanged reports an error when the file is no longer the one checked: a plan edited between
// the check and the writes must not be written from.
func (s *planSource) unchanged() error {
	now, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("plan file %s: %w", s.path, err)
	}
	if now.Size() != s.info.Size() || !now.ModTime().Equal(s.info.ModTime()) {
		return fmt.Errorf("plan file %s changed while copy ran (size %d, was %d; modified %s): nothing after it was written; re-run copy",
			s.path, now.Size(), s.info.Size(), now.ModTime().UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// groups streams the file's groups again, from its start, one group at a time, checking before
// each that the file is still the one checked. Copier.Stream pulls them as it goes.
func (s *planSource) groups() iter.Seq2[[]migrate.GroupPlan, error] {
	return func(yield func([]migrate.GroupPlan, error) bool) {
		if s.f == nil {
			yield(s.mem, nil)
			return
		}
		if err := s.rewind(); err != nil {
			yield(nil, err)
			return
		}
		if err := s.unchanged(); err != nil {
			yield(nil, err)
			return
		}
		stopped := false
		_, err := planfile.Scan(s.f, func(g migrate.GroupPlan) error {
			if err := s.unchanged(); err != nil {
				return err
			}
			if !yield([]migrate.GroupPlan{g}, nil) {
				stopped = true
				return errors.New("stopped")
			}
			return nil
		})
		if err == nil {
			err = s.unchanged()
		}
		if err != nil && !stopped {
			yield(nil, fmt.Errorf("plan file %s: %w", s.path, err))
		}
	}
}

// spillAfter is how many planned writes a fresh plan keeps in memory before it goes to a
// temporary file: small copies need no disk (nor room under a file size limit), big ones no
// memory for their writes.
const spillAfter = 20000

// spillFresh plans afresh and keeps the plan's writes, only the groups with writes and only
// their writes: in memory up to spillAfter of them, beyond that in a temporary plan file. It
// is what copy without --plan executes: the plan is read whole before anything is written, as
// it always was, and its fingerprint is known for the backup header.
func spillFresh(ctx context.Context, pl *migrate.Planner, limit int, now time.Time) (*planSource, error) {
	sink := &spillSink{limit: limit}
	tail, err := pl.Stream(ctx, now, sink)
	if err == nil && sink.file != nil {
		err = sink.file.Commit(tail.Fingerprint)
		sink.file = nil
	}
	if err != nil {
		return nil, errors.Join(err, sink.discard())
	}
	sink.stats.Summary = tail.Summary
	sink.stats.Head.Fingerprint = tail.Fingerprint
	if sink.dir == "" {
		return &planSource{path: "(memory)", stats: sink.stats, mem: sink.mem}, nil
	}
	src, err := openPlanSource(sink.path())
	if err != nil {
		return nil, errors.Join(err, sink.discard())
	}
	src.stats = sink.stats
	src.remove = func() error { return os.RemoveAll(sink.dir) }
	return src, nil
}

// spillSink counts every group and keeps only the groups with writes, only their writes.
type spillSink struct {
	head    migrate.Plan
	stats   *PlanStats
	mem     []migrate.GroupPlan
	entries int
	limit   int    // writes kept in memory before the spill
	dir     string // the temporary directory, once spilled
	file    *planfile.Writer
}

func (s *spillSink) path() string { return filepath.Join(s.dir, "plan.json") }

func (s *spillSink) Head(p migrate.Plan) error {
	s.head, s.stats = p, NewPlanStats(p)
	return nil
}

func (s *spillSink) Groups(gs []migrate.GroupPlan) error {
	for _, g := range gs {
		s.stats.Add(g)
		var writes []migrate.Entry
		for _, e := range g.Entries {
			if e.Action == migrate.ActionWrite {
				writes = append(writes, e)
			}
		}
		if len(writes) > 0 {
			// A group with writes has no gates (Build blocks a gated group's writes).
			s.mem = append(s.mem, migrate.GroupPlan{Group: g.Group, KafkaState: g.KafkaState, KafkaMembers: g.KafkaMembers,
				LiveConsumers: g.LiveConsumers, Gates: g.Gates, Entries: writes})
			s.entries += len(writes)
		}
	}
	if s.file == nil && s.entries <= s.limit {
		return nil
	}
	if s.file == nil {
		dir, err := os.MkdirTemp("", "zk2kafka-copy-*")
		if err != nil {
			return fmt.Errorf("temporary plan file: %w", err)
		}
		s.dir = dir
		if s.file, err = planfile.Create(s.path(), s.head); err != nil {
			return err
		}
	}
	err := s.file.Groups(s.mem)
	s.mem = nil
	return err
}

// discard removes what a failed spill left.
func (s *spillSink) discard() error {
	var errs []error
	if s.file != nil {
		errs = append(errs, s.file.Abort())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}
