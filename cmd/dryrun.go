package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// writeMode is --execute and --dry-run, shared by every verb that writes (copy, restore,
// dual-commit). A dry run is the default; --dry-run spells it out, as Kafka's own
// consumer-groups tool does, so a command line written for that tool's habits does what it says.
type writeMode struct {
	execute bool
	dryRun  dryRunFlag
}

// addFlags registers both flags; executeUsage says what --execute writes.
func (m *writeMode) addFlags(c *cobra.Command, executeUsage string) {
	f := c.Flags()
	f.BoolVar(&m.execute, "execute", false, executeUsage)
	f.VarPF(&m.dryRun, "dry-run", "", "write nothing, show what would be written (the default: the explicit spelling of leaving out --execute)").
		NoOptDefVal = "true"
}

// check refuses the two together: which one was meant cannot be guessed, and guessing either
// way is wrong for someone (a write not wanted, or a change window spent on a dry run).
func (m *writeMode) check() error {
	if m.execute && bool(m.dryRun) {
		return errors.New("--dry-run and --execute together: give one (--dry-run, the default, writes nothing; --execute writes)")
	}
	return nil
}

// dryRunFlag is a boolean flag that only turns on: --dry-run=false would read as "write", which
// only --execute may say.
type dryRunFlag bool

func (f *dryRunFlag) String() string {
	if *f {
		return "true"
	}
	return "false"
}

func (f *dryRunFlag) Set(s string) error {
	switch s {
	case "true", "1", "t", "T", "TRUE", "True":
		*f = true
		return nil
	case "false", "0", "f", "F", "FALSE", "False":
		return errors.New("a dry run is the default and --dry-run=false does not write: pass --execute to write")
	}
	return errors.New("expected no value (--dry-run) or true")
}

// Type is "bool" so that the help shows the flag without a value placeholder, as --execute.
func (f *dryRunFlag) Type() string { return "bool" }
