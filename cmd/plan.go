package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zk2kafka/zk2kafka/migrate"
)

type planOptions struct {
	selection selectionOptions
	output    string
	out       string
	policy    migrate.Policy
	filter    migrate.Filter
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

A group is blocked whole when legacy consumers are still registered in ZooKeeper
(legacy-consumers-alive: /consumers/<g>/ids or /owners non-empty) or the Kafka group has members
(kafka-group-active). Plan writes nothing; --out saves the plan for "migrate copy --plan".

Exit codes: 0 the plan is safe to execute, 2 something is blocked, 1 error.`,
		Example: `  zk2kafka migrate plan --zk zk1:2181/kafka --kafka broker1:9092
  zk2kafka migrate plan --group-regex '^billing-' --out plan.json
  zk2kafka migrate plan --output json | jq '.summary'
  zk2kafka migrate plan --output csv > reset.csv   # for kafka-consumer-groups --reset-offsets --from-file`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runPlan(c.Context(), d, g, o)
		},
	}
	o.selection.addFlags(c)
	c.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table, json, or csv (group,topic,partition,offset of the writes)")
	c.Flags().StringVar(&o.out, "out", "", "save the plan to this file for migrate copy --plan")
	return c
}

func (o *planOptions) validate() error {
	if err := checkOutput(o.output, "table", "json", "csv"); err != nil {
		return err
	}
	var err error
	if o.policy, err = o.selection.policy(); err != nil {
		return err
	}
	o.filter, err = o.selection.filter()
	return err
}

func runPlan(ctx context.Context, d *deps, g *globalOptions, o *planOptions) error {
	plan, err := readPlan(ctx, d, g, o.filter, o.policy)
	if err != nil {
		return err
	}
	// Show the plan first: if saving it fails, the operator still sees what it says.
	if err := renderPlan(d.stdout, o.output, plan); err != nil {
		return err
	}
	if o.out != "" {
		if err := migrate.WritePlanFile(o.out, plan); err != nil {
			return fmt.Errorf("save plan: %w", err)
		}
		d.logger.Info("plan saved", "file", o.out, "fingerprint", plan.Fingerprint)
	}
	if !plan.Safe() {
		s := plan.Summary()
		return unsafe("plan is not safe to execute: %d partition(s) blocked (see the reasons above)", s.ByAction[migrate.ActionBlock])
	}
	return nil
}

// readPlan opens both stores, reads one consistent view of the selection and computes the plan.
func readPlan(ctx context.Context, d *deps, g *globalOptions, f migrate.Filter, p migrate.Policy) (migrate.Plan, error) {
	legacy, kafka, closeStores, err := openStores(ctx, d, g)
	if err != nil {
		return migrate.Plan{}, err
	}
	defer closeStores()
	start := time.Now()
	in, err := migrate.ReadInputs(ctx, legacy, kafka, f)
	if err != nil {
		return migrate.Plan{}, err
	}
	d.logger.Debug("read both stores", "groups", len(in.Legacy), "took", time.Since(start))
	return migrate.Build(in, p, time.Now())
}

func checkOutput(got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return fmt.Errorf("--output: %q is not one of %v", got, allowed)
}
