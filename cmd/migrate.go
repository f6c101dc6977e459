package cmd

import (
	"github.com/spf13/cobra"
)

func newMigrateCmd(d *deps, g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Plan, copy, dual-commit and verify a ZooKeeper-to-Kafka offset migration",
		Long: `The migration, step by step:

  plan         read ZooKeeper and Kafka, classify every (group, topic, partition), write nothing
  copy         write the planned offsets into Kafka, a backup file first (dry run unless --execute)
  dual-commit  long-running: keep Kafka in step with ZooKeeper while consumers are rolled over
  verify       compare both stores per partition; exit 2 on drift, for CI gates

Group mapping: --group-map old=new (repeatable) and --group-map-file FILE (CSV, one old,new
line each, no header, # comments) land the offsets of legacy group old in Kafka group new.
Groups the map does not name keep their name. --group, --group-regex and --exclude-group-regex
select legacy (ZooKeeper) names. The legacy group's offsets and liveness are read in ZooKeeper
(a live legacy consumer of old blocks it), the new group's state and commits in Kafka (an active
new group blocks it). The map is applied once: a chain (a=b with b=c) is refused, and so is a
legacy group mapped to two groups. Two legacy groups may land in one Kafka group when they hold
no partition in common: they must then be selected together, and a shared partition refuses
the run before anything is written. plan records the map (filter.group_map, and each group's
kafka_group) and its fingerprint covers it: copy --plan runs under the plan's map and takes no
--group-map of its own. dual-commit mirrors each legacy group into its new group (--reverse
writes the new group's offsets back into the old group's znodes) and refuses merges.`,
		// Runnable, so that a mistyped subcommand ("migrate cpy") is an error (exit 1): cobra
		// answers a non-runnable parent with its help and exit 0, and a CI job would pass.
		Args: subcommandArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newPlanCmd(d, g), newCopyCmd(d, g), newDualCommitCmd(d, g), newVerifyCmd(d, g))
	return c
}
