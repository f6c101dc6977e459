package cmd

import "github.com/spf13/cobra"

func newPlanCmd(_ *deps, _ *globalOptions) *cobra.Command {
	return &cobra.Command{Use: "plan", Short: "Read both stores and classify every partition; write nothing", Args: cobra.NoArgs, RunE: notYet("plan")}
}
