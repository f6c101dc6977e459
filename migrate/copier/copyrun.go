package copier

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// ErrDrift is wrapped by Copy's error when the stores changed since the saved plan and the
// copy was refused (without Replan): nothing was written.
var ErrDrift = errors.New("the stores changed since the plan")

// Job is one run of copy: the stores, the plan to execute (a saved plan file, or a fresh
// plan of Filter under Policy), how to write it, and the caller's hooks. Copy applies every
// rule of the CLI to it: nothing here is checked by the caller.
type Job struct {
	// Legacy is the legacy store the plan (or the check of a saved plan) and each batch's
	// re-check read. From a SnapshotStore, Copy needs LegacyStopped.
	Legacy migrate.LegacyStore
	// LegacyIdentity is what the legacy source knows of its ZooKeeper (servers, chroot; its
	// KafkaClusterID is ignored: Copy asks Kafka). With Kafka's cluster id it is the cluster a
	// fresh plan records and a saved plan is checked against.
	LegacyIdentity migrate.ClusterIdentity
	// LegacyStopped is the caller's word that the legacy consumers are stopped: a
	// SnapshotStore cannot show whether they run, and Copy refuses it without (CheckWriteFrom).
	LegacyStopped bool
	Kafka         migrate.KafkaStore

	// PlanFile is the saved plan to execute ("" plans afresh). Its selection and policy are
	// used; Filter.AllowEmpty still comes from the job.
	PlanFile string
	// Replan executes a fresh plan when the stores changed since the saved one, instead of
	// refusing with ErrDrift.
	Replan bool
	// Force runs a saved plan made on another cluster, or one of schema 2 that records no
	// cluster, with a warning, instead of refusing it (ErrOtherCluster).
	Force bool

	Filter      migrate.Filter
	Policy      migrate.Policy
	ChunkGroups int
	// ReadProgress, when set, is told how far the read of the legacy store for the plan (or
	// for the check of the saved plan) has come; the re-checks are not reported.
	ReadProgress migrate.ReadProgressFunc

	// Copier settings: see Copier.
	Metadata    func(group string, e migrate.Entry) string
	BatchGroups int
	Parallel    int
	GatesOnly   bool
	Progress    func(done int)

	Execute bool
	Backup  string // the backup file created before anything is written (Execute)

	Log *slog.Logger // warnings and notes; nil: discarded
	Now func() time.Time
}

// Copy prepares a copy: it applies the refusals (a SnapshotStore without LegacyStopped, a
// saved plan of another cluster without Force), plans (or checks the saved plan against the
// stores: drift refuses, wrapping ErrDrift), keeps the plan's writes (in memory, or spilled to
// a temporary plan file when large) and, when executing, creates the backup file. Every offset
// is read once, without holding the plan, and nothing is written into Kafka: the writes happen
// as the caller ranges over the returned run's Results. On an error nothing was written and
// nothing is left open; otherwise the caller must range over Results or Close the run.
func Copy(ctx context.Context, job Job) (*Run, error) {
	log := job.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := job.Now
	if now == nil {
		now = time.Now
	}
	if job.Legacy == nil || job.Kafka == nil {
		return nil, errors.New("copy: no legacy store or no Kafka")
	}
	if err := migrate.CheckWriteFrom(job.Legacy, job.LegacyStopped); err != nil {
		return nil, err
	}
	current, err := CurrentCluster(ctx, job.Kafka, job.LegacyIdentity)
	if err != nil {
		return nil, err
	}
	var saved *planSource
	if job.PlanFile != "" {
		if saved, err = openSaved(&job); err != nil {
			return nil, err
		}
		if err := checkPlanCluster(log, job.PlanFile, saved.cluster, saved.schema, *current, job.Force); err != nil {
			return nil, errors.Join(err, saved.close())
		}
	}
	pl := &migrate.Planner{Legacy: migrate.WithReadProgress(job.Legacy, job.ReadProgress), Kafka: job.Kafka, Filter: job.Filter, Policy: job.Policy,
		ChunkGroups: job.ChunkGroups, Cluster: current}
	src, err := copyPlan(ctx, log, pl, saved, job, now())
	if saved != nil && src != saved {
		// Refused, or replanned: the saved file is not executed.
		if cerr := saved.close(); cerr != nil {
			log.Error("closing the plan file", "file", saved.path, "err", cerr)
		}
	}
	if err != nil {
		return nil, err
	}
	run := &Run{Stats: src.stats, src: src, log: log, execute: job.Execute,
		copier: &Copier{Legacy: job.Legacy, Kafka: job.Kafka, Committer: job.Kafka, Metadata: job.Metadata,
			BatchGroups: job.BatchGroups, Parallel: job.Parallel, GatesOnly: job.GatesOnly, Progress: job.Progress}}
	if job.Execute {
		backup, err := CreateBackup(job.Backup, src.stats.Head.Fingerprint, now())
		if err != nil {
			run.Close()
			return nil, fmt.Errorf("%w: nothing was written", err)
		}
		run.backup, run.copier.Backup = backup, backup
		log.Info("backup file created", "file", job.Backup)
	}
	return run, nil
}

// Run is a copy Copy prepared: checked, planned and backed up, with nothing written yet.
type Run struct {
	// Stats are the counts of the plan to execute, from its read before any write: what the
	// caller shows before the results (the plan head, the writes planned, what was blocked).
	Stats *PlanStats

	copier  *Copier
	src     *planSource
	backup  *FileBackup
	log     *slog.Logger
	execute bool
	started bool
	closed  bool
}

// errStopRange ends the copy when the caller breaks out of Results.
var errStopRange = errors.New("the caller stopped ranging over the results")

// Results executes the plan as the caller ranges over it, batch by batch (Copier.Stream: each
// batch re-checked, backed up, committed and read back; without Execute nothing is written).
// It yields each group's result, in plan order, once its batch is done, a failed batch's too;
// then, if the copy stopped (a store down, the backup failing, ctx ended), one zero
// GroupResult with the error. Nothing is committed before the range starts, and the results
// are never held beyond a batch: a copy of millions of offsets streams. Breaking out of the
// range stops the copy at the end of the batch in progress: nothing is committed after it.
// Results may be ranged over once; the run is closed when the range ends.
func (r *Run) Results(ctx context.Context) iter.Seq2[GroupResult, error] {
	return func(yield func(GroupResult, error) bool) {
		switch {
		case r.started:
			yield(GroupResult{}, errors.New("copy: the results were already taken"))
			return
		case r.closed:
			yield(GroupResult{}, errors.New("copy: the run was closed before its results were taken: nothing was written"))
			return
		}
		r.started = true
		defer r.Close()
		broke := false
		err := r.copier.Stream(ctx, r.Stats.Head, r.src.groups(), r.Stats.WriteGroups, r.execute, func(g GroupResult) error {
			if broke || !yield(g, nil) {
				broke = true
				return errStopRange
			}
			return nil
		})
		if err != nil && !broke {
			yield(GroupResult{}, err)
		}
	}
}

// Close releases what the run holds: the plan file (a temporary one is removed) and the
// backup file. Results closes the run itself; Close is for a run whose results are not taken,
// and may be called again. A failure to close is logged: the backup's records were synced as
// each batch was written.
func (r *Run) Close() {
	if r.closed {
		return
	}
	r.closed = true
	if err := r.src.close(); err != nil {
		r.log.Error("closing the plan file", "file", r.src.path, "err", err)
	}
	if r.backup != nil {
		if err := r.backup.Close(); err != nil {
			r.log.Error("closing the backup file", "file", r.backup.Path(), "err", err)
		}
	}
}

// openSaved opens the saved plan and takes its selection and policy into job.
func openSaved(job *Job) (*planSource, error) {
	src, err := openPlanSource(job.PlanFile)
	if err != nil {
		return nil, err
	}
	head, err := planfile.ReadHead(src.f)
	if err == nil {
		allowEmpty := job.Filter.AllowEmpty
		job.Policy = head.Policy
		job.Filter, err = migrate.NewFilterFromSpec(head.Filter)
		job.Filter.AllowEmpty = allowEmpty
		src.cluster, src.schema = head.Cluster, head.ReadFromSchema
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("plan file %s: %w", job.PlanFile, err), src.close())
	}
	return src, nil
}

// copyPlan decides what copy executes, before anything is written. With a saved plan, the file
// is read whole and compared with a fresh plan of the same stores group by group: drift
// refuses (or, with Replan, a fresh plan is made), an edited file is refused; otherwise the
// saved file is executed, read once more. Without one, a fresh plan is spilled and executed.
func copyPlan(ctx context.Context, log *slog.Logger, pl *migrate.Planner, saved *planSource, job Job, now time.Time) (*planSource, error) {
	if saved == nil {
		return spillFresh(ctx, pl, spillAfter, now)
	}
	if err := saved.rewind(); err != nil {
		return nil, err
	}
	chk, err := CheckSaved(ctx, job.PlanFile, saved.f, pl, now)
	if err != nil {
		return nil, err
	}
	if err := saved.unchanged(); err != nil {
		return nil, err
	}
	saved.stats = chk.Saved
	fp := chk.Saved.Head.Fingerprint
	drift := chk.Drift
	if chk.DriftCount > len(drift) {
		drift = append(drift, fmt.Sprintf("... and %d more", chk.DriftCount-len(drift)))
	}
	switch {
	case chk.DriftCount > 0 && fp == chk.Fresh.Fingerprint:
		// The stores are exactly as planned, yet the file says otherwise: it was changed after
		// plan saved it (a group removed to leave it out, a partition set to skip). Executing the
		// fresh plan would write what the operator took out; executing the file would trust
		// entries no store backs. Refuse both.
		return nil, fmt.Errorf("plan %s differs from the plan of the stores it was made from (fingerprint %s): edited after it was saved? nothing was written; re-run plan with the selection you want:\n  %s",
			job.PlanFile, fp, strings.Join(drift, "\n  "))
	case chk.DriftCount > 0 && !job.Replan:
		return nil, driftError{fmt.Sprintf("the stores changed since plan %s; nothing was written (re-run plan, or pass --replan):\n  %s",
			job.PlanFile, strings.Join(drift, "\n  "))}
	case chk.DriftCount > 0:
		log.Warn("the stores changed since the plan: using a fresh plan (--replan)", "changes", chk.DriftCount)
		return spillFresh(ctx, pl, spillAfter, now)
	}
	// No drift: the saved plan is executed (when only our own earlier writes differ, it is
	// resumed: those are found already equal).
	return saved, nil
}

// driftError is the refusal of a drifted saved plan: its message as the operator reads it,
// ErrDrift for the caller's exit code.
type driftError struct{ msg string }

func (e driftError) Error() string { return e.msg }
func (e driftError) Unwrap() error { return ErrDrift }
