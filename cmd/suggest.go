package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// subcommandArgs refuses an argument to a command that only holds subcommands, with cobra's own
// "Did you mean this?" list: cobra suggests subcommands only at the root, so "migrate plann"
// got none.
func subcommandArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor leaves to its callers
	}
	return fmt.Errorf("unknown command %q for %q%s", args[0], c.CommandPath(), didYouMean(c.SuggestionsFor(args[0])))
}

// flagError adds the flags closest to an unknown one to pflag's error ("unknown flag: --exectue"):
// cobra suggests subcommands but never flags. Closeness is cobra's own for subcommands: a
// case-insensitive Levenshtein distance of at most SuggestionsMinimumDistance (2), or a prefix.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" && isClose(name, f.Name, c.SuggestionsMinimumDistance) {
			names = append(names, "--"+f.Name)
		}
	})
	return fmt.Errorf("%w%s", err, didYouMean(names))
}

func didYouMean(suggestions []string) string {
	if len(suggestions) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t") + "\n"
}

// isClose is cobra's test in SuggestionsFor.
func isClose(typed, name string, maxDistance int) bool {
	if maxDistance <= 0 {
		maxDistance = 2
	}
	typed, name = strings.ToLower(typed), strings.ToLower(name)
	return strings.HasPrefix(name, typed) || levenshtein(typed, name) <= maxDistance
}

// levenshtein is the edit distance between a and b (bytes, as cobra counts).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
