package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
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

	opts verify.Options
	flt  migrate.Filter
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
	switch {
	case o.maxKafkaLead < -1:
		return fmt.Errorf("--max-kafka-lead: %d is negative, expected 0 or more (or -1: no limit)", o.maxKafkaLead)
	case o.maxKafkaLead >= 0 && o.strict:
		return errors.New("--max-kafka-lead with --strict: --strict already allows no lead")
	case o.maxKafkaLead >= 0:
		lead := o.maxKafkaLead
		o.opts.MaxKafkaLead = &lead
	}
	var err error
	if o.flt, err = o.filter.filter(); err != nil {
		return err
	}
	if o.mark && o.flt.Spec().TopicRegex != "" {
		// A marker says the whole group was verified; under a topic filter, its other topics
		// were never compared.
		return errors.New("--mark with --topic-regex: a marker says the whole group is migrated, but only the selected topics are verified; verify without --topic-regex to mark")
	}
	o.opts.MatchTopic = o.flt.MatchTopic
	o.opts.GroupMap = o.flt.GroupMap
	return nil
}

func runVerify(ctx context.Context, d *deps, g *globalOptions, o *verifyOptions) error {
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return err
	}
	defer src.Close()
	legacy := src.Store
	var marker migrate.LegacyWriter
	if o.mark {
		if marker, err = src.LegacyWriter(); err != nil {
			return fmt.Errorf("--mark: %w", err)
		}
	}
	kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
	if err != nil {
		return err
	}
	defer closeKafka()
	bar := newProgress(d, true)
	defer bar.finish()
	in, err := migrate.ReadInputs(ctx, migrate.WithReadProgress(legacy, bar.reads("verify: reading ZooKeeper")), kafka, o.flt)
	if err != nil {
		return err
	}
	bar.finish()
	states := in.Groups
	if o.viaTopic {
		if states, err = readViaTopic(ctx, d, g, in, o.flt.GroupMap); err != nil {
			return err
		}
	}
	// Legacy groups merged into one Kafka group are each compared with their own partitions.
	states = in.OwnStates(states)
	topics, err := describeCommitted(ctx, kafka, in, states, o.flt)
	if err != nil {
		return err
	}
	report := verify.Compare(in.Legacy, states, topics, o.opts)
	report.CheckedAt = time.Now().UTC()
	if len(report.Groups) == 0 {
		d.logger.Warn("no group selected: nothing was verified")
	}
	var markErr error
	if o.mark {
		markErr = markPassed(ctx, d, marker, &report)
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

// describeCommitted returns the log ranges of every partition the groups have a Kafka commit
// for, so that verify can fail a commit outside its log: in.Topics covers the topics of the
// legacy offsets (read after the commits, so a log end is never older than a commit); the
// selected topics only Kafka has a commit for are described here.
func describeCommitted(ctx context.Context, kafka migrate.KafkaState, in migrate.Inputs, states map[string]migrate.GroupState,
	flt migrate.Filter) (map[string]migrate.TopicInfo, error) {
	topics := maps.Clone(in.Topics)
	if topics == nil {
		topics = map[string]migrate.TopicInfo{}
	}
	var more []string
	for _, lg := range in.Legacy {
		for tp := range states[lg.Group].Committed {
			if _, ok := topics[tp.Topic]; !ok && flt.MatchTopic(tp.Topic) {
				more = append(more, tp.Topic)
			}
		}
	}
	if len(more) == 0 { // never an empty metadata request: it means "all topics"
		return topics, nil
	}
	slices.Sort(more)
	more = slices.Compact(more)
	described, err := kafka.Topics(ctx, more)
	if err != nil {
		return nil, fmt.Errorf("describe %d topics in kafka for their log ranges: %w", len(more), err)
	}
	maps.Copy(topics, described)
	return topics, nil
}

// readViaTopic replaces the OffsetFetch commits with those read from __consumer_offsets.
func readViaTopic(ctx context.Context, d *deps, g *globalOptions, in migrate.Inputs, gm migrate.GroupMap) (map[string]migrate.GroupState, error) {
	src, closeSrc, err := d.viaTopic(ctx, g, d)
	if err != nil {
		return nil, fmt.Errorf("--via-topic: %w", err)
	}
	defer closeSrc()
	names := make([]string, 0, len(in.Legacy))
	for _, lg := range in.Legacy {
		names = append(names, gm.Kafka(lg.Group)) // the Kafka group each is compared with
	}
	slices.Sort(names)
	committed, err := src.Committed(ctx, slices.Compact(names))
	if err != nil {
		return nil, fmt.Errorf("--via-topic: %w", err)
	}
	out := make(map[string]migrate.GroupState, len(in.Groups))
	for _, lg := range in.Legacy {
		n := lg.Group
		c, ok := committed[gm.Kafka(n)]
		if !ok {
			return nil, fmt.Errorf("--via-topic: no answer for group %q", gm.Kafka(n))
		}
		s := in.Groups[n]
		s.Committed, s.Metadata = c.Committed, c.Metadata
		out[n] = s
	}
	return out, nil
}

// cutoverMarker is the data of /consumers/<group>/zk2kafka-migrated.
type cutoverMarker struct {
	MigratedAt time.Time `json:"migrated_at"`
	Tool       string    `json:"tool"`
	Offsets    int       `json:"offsets"`
}

// markPassed writes the cutover marker of every passing group. A group with live legacy
// consumers is not marked even when it passes: its ZooKeeper offsets may move on at once, so it
// is not done. The first failure stops the marking; groups marked before it stay marked.
func markPassed(ctx context.Context, d *deps, w migrate.LegacyWriter, r *verify.Report) error {
	for i := range r.Groups {
		grp := &r.Groups[i]
		switch {
		case grp.Verdict != verify.VerdictPass:
			continue
		case len(grp.LiveConsumers) > 0:
			d.logger.Warn("not marking a group that still has live legacy consumers", "group", grp.Group, "live", len(grp.LiveConsumers))
			continue
		case len(grp.Partitions) == 0:
			d.logger.Warn("not marking a group without offsets: nothing was verified", "group", grp.Group)
			continue
		}
		data, err := json.Marshal(cutoverMarker{MigratedAt: r.CheckedAt, Tool: "zk2kafka " + d.build.Version, Offsets: len(grp.Partitions)})
		if err != nil {
			return fmt.Errorf("encode marker of group %q: %w", grp.Group, err)
		}
		if err := w.MarkMigrated(ctx, grp.Group, data); err != nil {
			return fmt.Errorf("--mark: %w", err)
		}
		grp.Marked = true
		d.logger.Info("group marked migrated", "group", grp.Group, "offsets", len(grp.Partitions))
	}
	return nil
}
