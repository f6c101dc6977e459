package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

type copyOptions struct {
	selection   selectionOptions
	planFile    string
	replan      bool
	backup      string
	output      string
	batchGroups int
	parallel    int
	recheck     string
	chunkGroups int
	force       bool
	writeMode   // --execute, --dry-run

	policy migrate.Policy
	filter migrate.Filter
	target targetOptions
}

func newCopyCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &copyOptions{}
	c := &cobra.Command{
		Use:   "copy",
		Short: "Write the planned offsets into Kafka (dry run unless --execute)",
		Long: `Copy executes a plan: it writes each group's ZooKeeper offsets into Kafka as an admin commit
(generation -1, no member) through the group coordinator, in batched OffsetCommit requests.

Before writing it reads both stores again: with --plan, any change since the plan (drift) stops
the run before anything is written, unless --replan. Just before each batch of groups is written
it re-checks the gates (live legacy consumers, an active Kafka group), the ZooKeeper offsets it
copies and the current Kafka offset, so --on-conflict=max still never moves an offset
backwards. --recheck=gates skips the ZooKeeper offsets in that re-check (faster: one read
less per offset; a change made during the copy by an unregistered writer is then only seen by
verify). Every Kafka offset about to
be overwritten is first saved to a backup file (--backup), then each written offset is read
back. An interrupted copy is resumed by running it again: offsets already written are found
equal and left alone. A saved plan made on another cluster (Kafka cluster id, ZooKeeper
servers or chroot) is refused unless --force.

Under a group map (a saved plan's own, or --group-map when planning afresh; see zk2kafka
migrate --help) each legacy group's offsets are committed into the Kafka group it maps to, its
gates read the legacy group's liveness and the new group's state, and the backup names the
Kafka group overwritten.

Without --execute nothing is written: copy shows what it would write.

Exit codes: 0 every planned offset written and read back (or nothing to do), 2 something was
blocked (plan, drift or re-check), 1 an error or a partition that failed.`,
		Example: `  zk2kafka migrate plan --out plan.json
  zk2kafka migrate copy --plan plan.json                      # dry run
  zk2kafka migrate copy --plan plan.json --execute
  zk2kafka migrate copy --group orders --execute --output json # plan afresh and write`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(c); err != nil {
				return err
			}
			if err := o.target.validate(c.Flags(), os.Getenv); err != nil {
				return err
			}
			return runCopy(c.Context(), d, g, o)
		},
	}
	o.selection.addFlags(c)
	o.selection.addAllowEmpty(c)
	f := c.Flags()
	f.StringVar(&o.planFile, "plan", "", "execute this saved plan (from migrate plan --out) instead of planning afresh")
	f.BoolVar(&o.force, "force", false, "with --plan: run a plan made on another cluster (its Kafka cluster id, ZooKeeper servers or chroot differ)")
	f.BoolVar(&o.replan, "replan", false, "with --plan: if the stores changed since the plan, use a fresh plan instead of refusing")
	o.writeMode.addFlags(c, "really write into Kafka (without it, a dry run)")
	f.StringVar(&o.backup, "backup", "", "backup file to create before writing (default zk2kafka-backup-<time>.jsonl)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.IntVar(&o.batchGroups, "batch-groups", 128, "groups re-checked and written together")
	f.IntVar(&o.parallel, "parallel", copier.DefaultParallel, "groups committed at once")
	f.IntVar(&o.chunkGroups, "chunk-groups", migrate.DefaultChunkGroups, "groups planned at a time (memory grows with it)")
	f.StringVar(&o.recheck, "recheck", "full", "what is read again before each batch: full (liveness, the ZooKeeper offsets being copied, "+
		"Kafka state) or gates (liveness and Kafka state only; the ZooKeeper offsets as compared when the copy started)")
	o.target.addFlags(c)
	return c
}

func (o *copyOptions) validate(c *cobra.Command) error {
	if err := o.writeMode.check(); err != nil {
		return err
	}
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	if o.recheck != "full" && o.recheck != "gates" {
		return fmt.Errorf("--recheck: %q is not one of [full gates]", o.recheck)
	}
	if o.batchGroups < 1 || o.parallel < 1 || o.chunkGroups < 1 {
		return errors.New("--batch-groups, --parallel and --chunk-groups must be at least 1")
	}
	if o.planFile != "" {
		for _, name := range []string{"group", "group-regex", "topic-regex", "exclude-group-regex", "on-conflict", "out-of-range", "offset-adjust",
			"group-map", "group-map-file"} {
			if c.Flags().Changed(name) {
				return fmt.Errorf("--%s: a saved plan (--plan) carries its own selection, group map and policy; re-run plan to change them", name)
			}
		}
	} else if o.replan {
		return errors.New("--replan needs --plan")
	} else if o.force {
		return errors.New("--force needs --plan: it runs a saved plan made on another cluster")
	}
	if o.execute && o.backup == "" {
		o.backup = "zk2kafka-backup-" + time.Now().UTC().Format("20060102T150405Z") + ".jsonl"
	}
	var err error
	if o.policy, err = o.selection.policy(); err != nil {
		return err
	}
	o.filter, err = o.selection.filter()
	return err
}

func runCopy(ctx context.Context, d *deps, g *globalOptions, o *copyOptions) error {
	mg, err := openMigration(ctx, d, g, &o.target)
	if err != nil {
		return err
	}
	defer mg.close()
	src, kafka := mg.src, mg.kafka
	// The bar is there from the start: the check pass (or the fresh plan) reads every offset
	// before the first write.
	bar := newProgress(d, true)
	defer bar.finish()
	// adjust is the executed plan's --offset-adjust (a saved plan's own), known once Copy
	// returns, before the first write; the provenance records it for verify.
	var adjust int64
	job := o.job(d, g, src, kafka, bar)
	job.Metadata = func(_ string, e migrate.Entry) string {
		return migrate.Provenance{Version: d.build.Version, Mtime: e.Mtime, Adjust: adjust}.String()
	}
	run, err := copier.Copy(ctx, job)
	if errors.Is(err, copier.ErrDrift) {
		return &exitError{code: ExitUnsafe, err: err}
	}
	if err != nil {
		return err
	}
	defer run.Close()
	stats := run.Stats
	if src.BeforeWrite != nil {
		bar.pause()
		fmt.Fprintf(d.stderr, "zk2kafka: %s\n", src.BeforeWrite())
	}
	warnRetention(d, stats)
	adjust = stats.Head.Policy.OffsetAdjust
	out, err := newCopyRenderer(d.stdout, o.output, stats, !o.execute)
	if err != nil {
		return err
	}
	writes := stats.Summary.ByAction[migrate.ActionWrite]
	if o.execute {
		bar.phase("copy: writing", writes, "offsets")
	} else {
		bar.phase("copy (dry run): checking", writes, "offsets")
	}
	var runErr error
	for gr, err := range run.Results(ctx) {
		if err == nil {
			bar.pause()
			err = out.group(gr)
		}
		if err != nil {
			runErr = err // a failed output stops the copy after the batch in progress
			break
		}
	}
	bar.finish()
	if err := out.end(); err != nil {
		return errors.Join(runErr, err)
	}
	bar.done(d, copyLine(out.counts, stats, !o.execute, bar.elapsed()))
	return copyExit(stats, out.counts, runErr)
}

// job is the copy the options ask for, over the opened stores.
func (o *copyOptions) job(d *deps, g *globalOptions, src *legacy.Source, kafka migrate.KafkaStore, bar *progress) copier.Job {
	what := "copy: planning: reading ZooKeeper"
	if o.planFile != "" {
		what = "copy: checking the plan: reading ZooKeeper"
	}
	return copier.Job{
		Legacy: src.Store, LegacyIdentity: src.Identity, LegacyStopped: g.legacyStopped, Kafka: kafka,
		PlanFile: o.planFile, Replan: o.replan, Force: o.force,
		Filter: o.filter, Policy: o.policy, ChunkGroups: o.chunkGroups, ReadProgress: bar.reads(what),
		BatchGroups: o.batchGroups, Parallel: o.parallel, GatesOnly: o.recheck == "gates", Progress: bar.set,
		Execute: o.execute, Backup: o.backup, Log: d.logger,
	}
}

// copyLine is copy's closing line on stderr.
func copyLine(n map[copier.PartitionStatus]int, stats *copier.PlanStats, dryRun bool, took string) string {
	if dryRun {
		return fmt.Sprintf("copy (dry run): %s offsets in %s groups would be written, %s already equal, %s blocked at re-check; checked in %s",
			thousands(int64(n[copier.StatusWouldWrite])), thousands(int64(stats.WriteGroups)), thousands(int64(n[copier.StatusAlready])),
			thousands(int64(n[copier.StatusBlocked])), took)
	}
	return fmt.Sprintf("copy: %s offsets in %s groups written and read back in %s; %s already equal, %s blocked at re-check, %s failed",
		thousands(int64(n[copier.StatusWritten])), thousands(int64(stats.WriteGroups)), took, thousands(int64(n[copier.StatusAlready])),
		thousands(int64(n[copier.StatusBlocked])), thousands(int64(n[copier.StatusFailed])))
}

// copyExit maps a copy's outcome to the exit codes of --help.
func copyExit(stats *copier.PlanStats, n map[copier.PartitionStatus]int, runErr error) error {
	switch {
	case runErr != nil:
		return runErr
	case n[copier.StatusFailed] > 0:
		return fmt.Errorf("%d partition(s) failed (see above)", n[copier.StatusFailed])
	case n[copier.StatusBlocked] > 0 || !stats.Safe():
		return unsafe("%d partition(s) blocked by the plan, %d by the re-check before writing%s",
			stats.Summary.ByAction[migrate.ActionBlock], n[copier.StatusBlocked], blockedByPlan(stats))
	}
	return nil
}

// blockedByPlan names the partitions the plan blocked and why: the copy table shows only the
// planned writes, and "1 partition(s) blocked" alone leaves the operator to guess which.
func blockedByPlan(stats *copier.PlanStats) string {
	lines := stats.Blocked
	if n := stats.Summary.ByAction[migrate.ActionBlock]; n > len(lines) {
		lines = append(slices.Clip(lines), fmt.Sprintf("... and %d more", n-len(lines)))
	}
	if len(lines) == 0 {
		return ""
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}

func warnRetention(d *deps, stats *copier.PlanStats) {
	if stats.Head.Retention > 0 && stats.Summary.ByAction[migrate.ActionWrite] > 0 {
		d.logger.Warn("copied offsets of an empty group expire this long after the commit unless consumers commit: copy close to the cutover, or run dual-commit",
			"offsets.retention", time.Duration(stats.Head.Retention))
	}
}

func limit(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], fmt.Sprintf("... and %d more", len(lines)-n))
}
