package cmd

import "github.com/spf13/cobra"

// newDevCmd holds developer tooling (seeding the local stack); hidden from --help.
func newDevCmd(_ *deps, _ *globalOptions) *cobra.Command {
	return &cobra.Command{Use: "dev", Short: "Developer tooling for the local stack", Hidden: true}
}
