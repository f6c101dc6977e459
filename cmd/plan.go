package cmd

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

type planOptions struct {
	selection selectionOptions
	output    string
	outputSet bool // --output given (or configured): no switch to the summary by size
	rows      int
	out       string
	chunk     int
	policy    migrate.Policy
	filter    migrate.Filter
	target    targetOptions
}

func newPlanCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &planOptions{}
	c := &cobra.Command{
		Use:   "plan",
		Short: "Read both stores and classify every partition; write nothing",
		Long: `Plan reads every selected group's offsets from ZooKeeper and the same partitions from Kafka
(log start and end, committed offsets, group state) and classifies each (group, topic, partition):

  equal              both stores agree: nothing to do
  zk-only            Kafka has no commit: copy will write the ZooKeeper offset
  zk-ahead           ZooKeeper is ahead of Kafka
  kafka-ahead        Kafka is ahead of ZooKeeper (kept by default: never backwards)
  below-log-start    the ZooKeeper offset is below the partition's log start (data expired)
  above-log-end      the ZooKeeper offset is beyond the partition's log end
  topic-missing      Kafka has no such topic
  partition-missing  Kafka's topic has fewer partitions
  invalid-znode      the znode is not a usable offset (-1, empty, not a number, ACL denied)

With --target-kafka (a cluster MirrorMaker 2 replicates --kafka into) every ZooKeeper offset is
first translated into the target's log through MirrorMaker 2's offset syncs: exact where a sync
pins it, else rounded down to just past the sync below (the plan names the most records a
consumer may read again). Classes of an offset no sync places, always blocked:

  no-offset-sync      MirrorMaker 2 has no sync of the partition (not replicated, not yet synced)
  below-first-sync    the offset is below the first sync left (replication started after it)
  replication-behind  the offset is further past the latest sync than --mm2-offset-lag-max

A group is blocked whole when legacy consumers are still registered in ZooKeeper
(legacy-consumers-alive: /consumers/<g>/ids or /owners non-empty) or the Kafka group has members
(kafka-group-active). Plan writes nothing; --out saves the plan for "migrate copy --plan".

The table lists every partition that is not equal. Above 1,000 partitions the default table is
the per-group summary instead (-o summary asks for it at any size, -o table for the partitions):
one row per group with partitions, write / skip / block counts, what blocks it (its gates, the
legacy consumers counted as consumers, and the classes of the partitions blocked on their own)
and the lag (the sum over its partitions of log end - ZooKeeper offset). Problems first: the
groups with partitions blocked on their own, then the gated ones, then by name; --summary-rows
of them (30; 0: all), the totals of every group in the footer.

With --group-map old=new (see zk2kafka migrate --help) the legacy group old is compared with
Kafka group new (its state, members and commits); the plan names both (group, kafka_group) and
refuses two legacy groups mapped onto one Kafka group that share a partition.

Exit codes: 0 the plan is safe to execute, 2 something is blocked, 1 error.`,
		Example: `  zk2kafka migrate plan --zk zk1:2181/kafka --kafka broker1:9092
  zk2kafka migrate plan --group-regex '^billing-' --out plan.json
  zk2kafka migrate plan --output json | jq '.summary'
  zk2kafka migrate plan --output csv > reset.csv   # for kafka-consumer-groups --reset-offsets --from-file`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.outputSet = givenOutside(c.Flags(), "output") // a configured table is a table too
			if err := o.validate(); err != nil {
				return err
			}
			if err := o.target.validate(c.Flags(), os.Getenv); err != nil {
				return err
			}
			return runPlan(c.Context(), d, g, o)
		},
	}
	o.selection.addFlags(c)
	o.selection.addAllowEmpty(c)
	c.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table (every partition not equal; by default the summary above 1,000 partitions), "+
		"summary (one row per group), json, or csv (group,topic,partition,offset of the writes)")
	c.Flags().IntVar(&o.rows, "summary-rows", defaultSummaryRows, "groups the summary lists, problems first (0: every group)")
	c.Flags().StringVar(&o.out, "out", "", "save the plan to this file for migrate copy --plan")
	c.Flags().IntVar(&o.chunk, "chunk-groups", migrate.DefaultChunkGroups, "groups planned at a time (memory grows with it)")
	o.target.addFlags(c)
	return c
}

func (o *planOptions) validate() error {
	if err := checkOutput(o.output, "table", "summary", "json", "csv"); err != nil {
		return err
	}
	if o.rows < 0 {
		return fmt.Errorf("--summary-rows must be 0 (every group) or more, got %d", o.rows)
	}
	if o.chunk < 1 {
		return fmt.Errorf("--chunk-groups must be at least 1, got %d", o.chunk)
	}
	var err error
	if o.policy, err = o.selection.policy(); err != nil {
		return err
	}
	o.filter, err = o.selection.filter()
	return err
}

func runPlan(ctx context.Context, d *deps, g *globalOptions, o *planOptions) error {
	mg, err := openMigration(ctx, d, g, &o.target)
	if err != nil {
		return err
	}
	defer mg.close()
	src, kafka := mg.src, mg.kafka
	bar := newProgress(d, true)
	defer bar.finish()
	legacy := migrate.WithReadProgress(src.Store, bar.reads("plan: reading ZooKeeper"))
	format := o.output
	if format == "table" && !o.outputSet {
		format = "auto"
	}
	out := newPlanRenderer(d.stdout, format, o.rows)
	sink := &planSink{out: out, path: o.out, bar: bar}
	defer sink.abort(d)
	pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Filter: o.filter, Policy: o.policy, ChunkGroups: o.chunk}
	if pl.Cluster, err = clusterIdentity(ctx, src, kafka); err != nil {
		return err
	}
	tail, err := pl.Stream(ctx, time.Now(), sink)
	if err != nil {
		return err
	}
	bar.finish()
	// Show the plan first: if saving it fails, the operator still sees what it says.
	if err := out.End(tail); err != nil {
		return err
	}
	if err := sink.commit(tail); err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	if o.out != "" {
		d.logger.Info("plan saved", "file", o.out, "fingerprint", tail.Fingerprint)
	}
	sum := tail.Summary // the closing line, after the output: what a person reads last
	bar.done(d, fmt.Sprintf("plan: %s offsets in %s groups read in %s; %s write, %s skip, %s block",
		thousands(int64(sum.Partitions)), thousands(int64(sum.Groups)), bar.elapsed(),
		thousands(int64(sum.ByAction[migrate.ActionWrite])), thousands(int64(sum.ByAction[migrate.ActionSkip])),
		thousands(int64(sum.ByAction[migrate.ActionBlock]))))
	if !tail.Safe() {
		return unsafe("plan is not safe to execute: %d partition(s) blocked (see the reasons above)", tail.Summary.ByAction[migrate.ActionBlock])
	}
	return nil
}

// planSink hands the streamed plan to the output and, with --out, to the plan file. A failure
// of the file does not stop the output (the operator still sees the plan); it is reported at
// the end, and the file is then never put in place.
type planSink struct {
	out     *planRenderer
	bar     *progress // cleared before each write: the output may be the same terminal
	path    string
	file    *planfile.Writer
	fileErr error
}

func (s *planSink) Head(p migrate.Plan) error {
	if s.path != "" {
		s.file, s.fileErr = planfile.Create(s.path, p)
	}
	return s.out.Head(p)
}

func (s *planSink) Groups(gs []migrate.GroupPlan) error {
	if s.file != nil && s.fileErr == nil {
		s.fileErr = s.file.Groups(gs)
	}
	s.bar.pause()
	return s.out.Groups(gs)
}

// commit puts the plan file in place, or reports why it was not.
func (s *planSink) commit(tail migrate.PlanTail) error {
	if s.fileErr != nil || s.file == nil {
		return s.fileErr
	}
	f := s.file
	s.file = nil
	return f.Commit(tail.Fingerprint)
}

// abort removes a plan file never committed: a plan that stopped half way is not a plan.
func (s *planSink) abort(d *deps) {
	if s.file == nil {
		return
	}
	if err := s.file.Abort(); err != nil {
		d.logger.Error("removing the unfinished plan file", "file", s.path, "err", err)
	}
}

func checkOutput(got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return fmt.Errorf("--output: %q is not one of %v", got, allowed)
}
