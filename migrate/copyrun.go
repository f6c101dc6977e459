package migrate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// ErrDrift is wrapped by Copy's error when the stores changed since the saved plan and the
// copy was refused (without Replan): nothing was written.
var ErrDrift = errors.New("the stores changed since the plan")

// CopyJob is one run of copy: the plan to execute (a saved plan file, or a fresh plan of Filter
// under Policy), how to write it, and the caller's hooks.
type CopyJob struct {
	Legacy    LegacyStore
	Kafka     KafkaState
	Committer OffsetCommitter
	// PlanLegacy is the legacy store the plan (or the check of a saved plan) reads through, for
	// a progress-counting wrapper (nil: Legacy).
	PlanLegacy LegacyStore

	// PlanFile is the saved plan to execute ("" plans afresh). Its selection and policy are
	// used; Filter.AllowEmpty still comes from the job.
	PlanFile string
	// Replan executes a fresh plan when the stores changed since the saved one, instead of
	// refusing with ErrDrift.
	Replan bool
	// CheckCluster is given the saved plan's cluster (nil: none recorded), the schema_version
	// the file was written with and the connected cluster; an error refuses the plan.
	CheckCluster func(saved *ClusterIdentity, savedSchema int, current *ClusterIdentity) error

	Filter      Filter
	Policy      Policy
	ChunkGroups int
	Cluster     *ClusterIdentity // the connected cluster, recorded in a fresh plan

	// Copier settings: see Copier.
	Metadata    func(group string, e Entry) string
	BatchGroups int
	Parallel    int
	GatesOnly   bool
	Progress    func(done int)

	Execute bool
	Backup  string // the backup file created before anything is written (Execute)

	// Start is called once the plan is read whole and checked (and, when executing, the backup
	// created), before anything is written: it returns the sink each group's result goes to.
	Start func(stats *PlanStats) (func(GroupResult) error, error)
	Log   *slog.Logger // nil: discarded
	Now   func() time.Time
}

// Copy plans (or checks the saved plan against the stores), keeps the plan's writes (in memory,
// or spilled to a temporary plan file when large), reads them back and executes them with a
// Copier: every offset is read once before the first write, without holding the plan. The
// returned stats are nil when nothing was started; the error is what stopped the run (a saved
// plan that drifted wraps ErrDrift).
func Copy(ctx context.Context, job CopyJob) (*PlanStats, error) {
	log := job.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := job.Now
	if now == nil {
		now = time.Now
	}
	var saved *planSource
	if job.PlanFile != "" {
		var err error
		if saved, err = openSaved(&job); err != nil {
			return nil, err
		}
		defer saved.close()
	}
	planLegacy := job.PlanLegacy
	if planLegacy == nil {
		planLegacy = job.Legacy
	}
	pl := &Planner{Legacy: planLegacy, Kafka: job.Kafka, Filter: job.Filter, Policy: job.Policy,
		ChunkGroups: job.ChunkGroups, Cluster: job.Cluster}
	if saved != nil && job.CheckCluster != nil {
		if err := job.CheckCluster(saved.cluster, saved.schema, job.Cluster); err != nil {
			return nil, err
		}
	}
	src, err := copyPlan(ctx, log, pl, saved, job, now())
	if err != nil {
		return nil, err
	}
	if src != saved {
		defer func() {
			if err := src.close(); err != nil {
				log.Error("closing the temporary plan file", "file", src.path, "err", err)
			}
		}()
	}
	copier := &Copier{Legacy: job.Legacy, Kafka: job.Kafka, Committer: job.Committer, Metadata: job.Metadata,
		BatchGroups: job.BatchGroups, Parallel: job.Parallel, GatesOnly: job.GatesOnly, Progress: job.Progress}
	if job.Execute {
		backup, err := CreateBackup(job.Backup, src.stats.Head.Fingerprint, now())
		if err != nil {
			return nil, fmt.Errorf("%w: nothing was written", err)
		}
		defer func() {
			if err := backup.Close(); err != nil {
				log.Error("closing the backup file", "file", backup.Path(), "err", err)
			}
		}()
		copier.Backup = backup
		log.Info("backup file created", "file", job.Backup)
	}
	sink := func(GroupResult) error { return nil }
	if job.Start != nil {
		if sink, err = job.Start(src.stats); err != nil {
			return nil, err
		}
	}
	return src.stats, copier.Stream(ctx, src.stats.Head, src.groups(), src.stats.WriteGroups, job.Execute, sink)
}

// openSaved opens the saved plan and takes its selection and policy into job.
func openSaved(job *CopyJob) (*planSource, error) {
	src, err := openPlanSource(job.PlanFile)
	if err != nil {
		return nil, err
	}
	head, err := ReadPlanHead(src.f)
	if err == nil {
		allowEmpty := job.Filter.AllowEmpty
		job.Policy = head.Policy
		job.Filter, err = NewFilterFromSpec(head.Filter)
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
func copyPlan(ctx context.Context, log *slog.Logger, pl *Planner, saved *planSource, job CopyJob, now time.Time) (*planSource, error) {
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
