package cmd

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
)

// copySource is the plan copy executes, streamed from a file it has already read whole and
// checked (the saved plan, or a fresh plan spilled to a temporary file), with the counts of
// that first read: copy prepares everything before writing anything, without holding the plan.
type copySource struct {
	path  string
	f     *os.File
	info  os.FileInfo // size and mtime when it was checked
	stats *migrate.PlanStats
	// remove deletes a temporary plan file's directory on close (nil: the operator's file).
	remove func() error
}

// openSource opens path and remembers its size and mtime.
func openSource(path string) (*copySource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open plan file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("plan file %s: %w", path, err), f.Close())
	}
	return &copySource{path: path, f: f, info: info}, nil
}

func (s *copySource) close() error {
	err := s.f.Close()
	if s.remove != nil {
		err = errors.Join(err, s.remove())
	}
	return err
}

// rewind puts the file back at its start for another read.
func (s *copySource) rewind() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("plan file %s: %w", s.path, err)
	}
	return nil
}

// unchanged reports an error when the file is no longer the one checked: a plan edited between
// the check and the writes must not be written from.
func (s *copySource) unchanged() error {
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
func (s *copySource) groups() iter.Seq2[[]migrate.GroupPlan, error] {
	return func(yield func([]migrate.GroupPlan, error) bool) {
		if err := s.rewind(); err != nil {
			yield(nil, err)
			return
		}
		if err := s.unchanged(); err != nil {
			yield(nil, err)
			return
		}
		stopped := false
		_, err := migrate.ScanPlan(s.f, func(g migrate.GroupPlan) error {
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

// spillFresh plans afresh and saves the plan, keeping only each group's writes, in a
// temporary directory: what copy without --plan executes. The plan is read whole before
// anything is written, as it always was, and its fingerprint is known for the backup header;
// memory holds a chunk, the disk the writes. Closing the source deletes the directory.
func spillFresh(ctx context.Context, pl *migrate.Planner) (src *copySource, err error) {
	dir, err := os.MkdirTemp("", "zk2kafka-copy-*")
	if err != nil {
		return nil, fmt.Errorf("temporary plan file: %w", err)
	}
	remove := func() error { return os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			err = errors.Join(err, remove())
		}
	}()
	path := filepath.Join(dir, "plan.json")
	sink := &spillSink{path: path}
	tail, err := pl.Stream(ctx, time.Now(), sink)
	if err != nil {
		if sink.file != nil {
			err = errors.Join(err, sink.file.Abort())
		}
		return nil, err
	}
	if err := sink.file.Commit(tail.Fingerprint); err != nil {
		return nil, err
	}
	if src, err = openSource(path); err != nil {
		return nil, err
	}
	sink.stats.Summary = tail.Summary
	sink.stats.Head.Fingerprint = tail.Fingerprint
	src.stats, src.remove = sink.stats, remove
	return src, nil
}

// spillSink counts every group and writes only the groups with writes, only their writes.
type spillSink struct {
	path  string
	file  *migrate.PlanFileWriter
	stats *migrate.PlanStats
}

func (s *spillSink) Head(p migrate.Plan) error {
	s.stats = migrate.NewPlanStats(p)
	var err error
	s.file, err = migrate.CreatePlanFile(s.path, p)
	return err
}

func (s *spillSink) Groups(gs []migrate.GroupPlan) error {
	var keep []migrate.GroupPlan
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
			keep = append(keep, migrate.GroupPlan{Group: g.Group, KafkaState: g.KafkaState, KafkaMembers: g.KafkaMembers,
				LiveConsumers: g.LiveConsumers, Gates: g.Gates, Entries: writes})
		}
	}
	return s.file.Groups(keep)
}
