package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/verify"
)

type verifyOptions struct {
	filter       filterOptions
	strict       bool
	maxKafkaLead int64
	output       string
	rows         int
	viaTopic     bool
	mark         bool
	offsetAdjust int64

	opts   verify.Options
	flt    migrate.Filter
	target targetOptions
}

func newVerifyCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &verifyOptions{}
	c := &cobra.Command{
		Use:   "verify",
		Short: "Compare both stores per partition; exit 2 on drift",
		Long: `Verify reads both stores as plan does and compares every selected partition:

  match             both stores hold the same offset
  kafka-ahead       Kafka is ahead: fine once consumers commit to Kafka, unless --strict or
                    beyond --max-kafka-lead
  kafka-behind      Kafka is behind ZooKeeper: consumers would re-read records
  missing-in-kafka  ZooKeeper has an offset, Kafka no commit
  missing-in-zk     Kafka has a commit for a partition the group's ZooKeeper tree lacks
  invalid-znode     the znode is not a usable offset
  kafka-out-of-range  Kafka's commit is below the partition's log start or above its log end:
                    fails even when ZooKeeper holds the same offset (a consumer starting there
                    resets by auto.offset.reset)
  adjust-mismatch   Kafka's commit is the znode plus the --offset-adjust of the zk2kafka copy
                    that wrote it (read from the commit's metadata), untouched since, and that
                    adjust differs from this verify's --offset-adjust: one of the two runs is
                    wrong about what the legacy client stored, by that many records

With --offset-adjust N (as given to the copy), Kafka is expected at the znode's offset + N.
With --group-map old=new (as given to plan), legacy group old is compared with Kafka group new;
the report names both (kafka_group). Of legacy groups merged into one Kafka group, each is
compared with its own partitions.

With --target-kafka (a cluster MirrorMaker 2 replicates --kafka into; the flags of migrate plan)
each ZooKeeper offset is first translated into the target's log through MirrorMaker 2's offset
syncs and compared there: match (what copy writes), kafka-behind (records read again, none
skipped: it passes unless --strict; MirrorMaker 2's own group offset sync rounds further down at
times), kafka-ahead (records the legacy consumer has not read would be skipped: a failure unless
within --max-kafka-lead), or not-replicated (no sync places it yet: a failure).

A group passes when every one of its partitions does. -o summary is one row per group (partitions,
ok, failed, verdict, the failing statuses and live legacy consumers), the failing groups first,
--summary-rows of them (30; 0: all), the totals in the footer. With --mark, every group that passes
(and has no live legacy consumers) gets a cutover marker in ZooKeeper,
/consumers/<group>/zk2kafka-migrated, beside its offsets; no offset is ever deleted.

Exit codes: 0 the stores agree, 2 they disagree, 1 error.`,
		Example: `  zk2kafka migrate verify --group orders --strict
  zk2kafka migrate verify --output junit > verify.xml
  zk2kafka migrate verify --max-kafka-lead 1000 --mark
  zk2kafka migrate verify --group clicks-lastread --offset-adjust 1 --strict`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if err := o.target.validate(c.Flags(), os.Getenv); err != nil {
				return err
			}
			if o.target.enabled() && o.viaTopic {
				return errors.New("--via-topic reads the __consumer_offsets of --kafka, the source: it is not a check of --target-kafka")
			}
			return runVerify(c.Context(), d, g, o)
		},
	}
	o.filter.addFlags(c)
	o.filter.addAllowEmpty(c)
	f := c.Flags()
	f.BoolVar(&o.strict, "strict", false, "require exact equality: kafka-ahead fails too")
	f.Int64Var(&o.maxKafkaLead, "max-kafka-lead", -1, "kafka-ahead fails when Kafka is more than N offsets ahead (-1: no limit)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, summary (one row per group, failing first), json, or junit (JUnit XML for CI)")
	f.IntVar(&o.rows, "summary-rows", defaultSummaryRows, "groups -o summary lists, failing first (0: every group)")
	f.BoolVar(&o.viaTopic, "via-topic", false, "read Kafka's commits from __consumer_offsets itself instead of OffsetFetch (an independent check)")
	addOffsetAdjustFlag(c, &o.offsetAdjust)
	f.BoolVar(&o.mark, "mark", false, "write the cutover marker /consumers/<group>/zk2kafka-migrated for each group that passes")
	o.target.addFlags(c)
	return c
}

func (o *verifyOptions) validate() error {
	if err := checkOutput(o.output, append(verify.Formats(), "summary")...); err != nil {
		return err
	}
	if o.rows < 0 {
		return fmt.Errorf("--summary-rows must be 0 (every group) or more, got %d", o.rows)
	}
	o.opts = verify.Options{Strict: o.strict, OffsetAdjust: o.offsetAdjust}
	// By value, not by Changed: a value from the environment or the config file counts too.
	// -1 is the flag's "no limit"; verify.Options has none (nil) for it.
	switch {
	case o.maxKafkaLead < -1:
		return fmt.Errorf("--max-kafka-lead: %d is negative, expected 0 or more (or -1: no limit)", o.maxKafkaLead)
	case o.maxKafkaLead >= 0:
		lead := o.maxKafkaLead
		o.opts.MaxKafkaLead = &lead
	}
	if err := o.opts.Validate(); err != nil {
		return err
	}
	var err error
	if o.flt, err = o.filter.filter(); err != nil {
		return err
	}
	if o.mark {
		return verify.CheckMark(o.flt)
	}
	return nil
}

func runVerify(ctx context.Context, d *deps, g *globalOptions, o *verifyOptions) error {
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return err
	}
	defer src.Close()
	req := verify.Request{Filter: o.flt, Options: o.opts, Mark: o.mark, ViaTopic: o.viaTopic,
		Version: d.build.Version, Logger: d.logger}
	if o.mark {
		if req.Writer, err = src.LegacyWriter(); err != nil {
			return fmt.Errorf("--mark: %w", err)
		}
	}
	kafka, tr, closeKafka, err := openVerified(ctx, d, g, &o.target, src)
	if err != nil {
		return err
	}
	defer closeKafka()
	req.Translator = tr
	if o.viaTopic {
		committed, closeCommitted, err := d.viaTopic(ctx, g, d)
		if err != nil {
			return fmt.Errorf("--via-topic: %w", err)
		}
		defer closeCommitted()
		req.Committed = committed
	}
	bar := newProgress(d, true)
	defer bar.finish()
	req.Legacy, req.Kafka = src.Store, kafka
	req.ReadProgress, req.ReadDone = bar.reads("verify: reading ZooKeeper"), bar.finish
	report, err := verify.Run(ctx, req)
	var markErr *verify.MarkError
	if err != nil && !errors.As(err, &markErr) {
		return err
	}
	if o.output == "summary" {
		err = writeVerifySummary(d.stdout, report, o.rows)
	} else {
		err = verify.Render(d.stdout, o.output, report)
	}
	if err != nil {
		return err
	}
	s := report.Summary
	bar.done(d, fmt.Sprintf("verify: %s offsets in %s groups compared in %s; %s partitions fail, %s groups fail",
		thousands(int64(s.Partitions)), thousands(int64(s.Groups)), bar.elapsed(), thousands(int64(s.Failed)), thousands(int64(s.GroupsFailed))))
	if markErr != nil {
		return markErr
	}
	if !report.Pass {
		oor := s.ByStatus[verify.StatusKafkaOutOfRange]
		what := "the stores disagree"
		switch {
		case oor == s.Failed:
			what = "Kafka holds committed offsets outside the partitions' logs"
		case oor > 0:
			what = fmt.Sprintf("the stores disagree, and Kafka holds %d committed offset(s) outside the partitions' logs", oor)
		}
		return unsafe("%s: %d partition(s) failed in %d of %d group(s)", what, s.Failed, s.GroupsFailed, s.Groups)
	}
	return nil
}

// openVerified opens the Kafka cluster verify compares ZooKeeper with: --kafka, or the target
// of --target-kafka, the legacy store then read through the translation into its log.
func openVerified(ctx context.Context, d *deps, g *globalOptions, t *targetOptions, src *legacy.Source) (migrate.KafkaState, migrate.Translator, func(), error) {
	if !t.enabled() {
		kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
		return kafka, nil, closeKafka, err
	}
	kafka, tr, closeTarget, err := d.target(ctx, g, t, d)
	if err != nil {
		return nil, nil, nil, err
	}
	src.Store = migrate.Translated(src.Store, tr)
	return kafka, tr, closeTarget, nil
}
