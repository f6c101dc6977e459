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
  verify       compare both stores per partition; exit 2 on drift, for CI gates`,
		// Runnable, so that a mistyped subcommand ("migrate cpy") is an error (exit 1): cobra
		// answers a non-runnable parent with its help and exit 0, and a CI job would pass.
		Args: subcommandArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newPlanCmd(d, g), newCopyCmd(d, g), newDualCommitCmd(d, g), newVerifyCmd(d, g))
	return c
}
