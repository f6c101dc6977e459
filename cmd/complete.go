package cmd

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// completionTimeout bounds the ZooKeeper read behind the completion of --group: a shell waits
// for it on every Tab.
const completionTimeout = 2 * time.Second

// flagValues are the values of every flag that takes one of a fixed set, by flag name; --output
// differs per command, by command name. The commands check the same sets when they run.
func flagValues() (byName map[string][]string, output map[string][]string) {
	return map[string][]string{
			"on-conflict":                 {string(migrate.ConflictMax), string(migrate.ConflictZK), string(migrate.ConflictKafka), string(migrate.ConflictFail)},
			"out-of-range":                {string(migrate.RangeFail), string(migrate.RangeClamp), string(migrate.RangeSkip)},
			"to":                          {"kafka", "zk"},
			"from":                        {"zk", "kafka"},
			"format":                      {"json", "csv"},
			"recheck":                     {"full", "gates"},
			"log-level":                   {"debug", "info", "warn", "error"},
			"log-format":                  {"text", "json"},
			"kafka-sasl-mechanism":        kafkaconn.Mechanisms(),
			"target-kafka-sasl-mechanism": kafkaconn.Mechanisms(),
			"replication-policy":          {mm2.PolicyDefault, mm2.PolicyIdentity},
			"mm2-offset-syncs-location":   {"source", "target"},
		}, map[string][]string{
			"plan":    {"table", "summary", "json", "csv"},
			"verify":  {"table", "summary", "json", "junit"},
			"copy":    {"table", "json"},
			"restore": {"table", "json"},
			"version": {"text", "json"},
		}
}

// registerCompletions gives shell completion its candidates: the values of the fixed-set flags
// and, for --group, the groups ZooKeeper holds. It runs once, on the finished command tree.
func registerCompletions(root *cobra.Command, d *deps, g *globalOptions) {
	byName, output := flagValues()
	var walk func(c *cobra.Command)
	register := func(c *cobra.Command, f *pflag.Flag) {
		if _, done := c.GetFlagCompletionFunc(f.Name); done {
			return
		}
		var fn cobra.CompletionFunc
		switch {
		case f.Name == "group":
			fn = completeGroups(d, g)
		case f.Name == "output" && output[c.Name()] != nil:
			fn = cobra.FixedCompletions(output[c.Name()], cobra.ShellCompDirectiveNoFileComp)
		case f.Name == "on-conflict" && c.Name() == "dual-commit":
			// dual-commit refuses zk: it would move Kafka backwards.
			fn = cobra.FixedCompletions(slices.DeleteFunc(slices.Clone(byName[f.Name]), func(v string) bool {
				return v == string(migrate.ConflictZK)
			}), cobra.ShellCompDirectiveNoFileComp)
		case byName[f.Name] != nil:
			fn = cobra.FixedCompletions(byName[f.Name], cobra.ShellCompDirectiveNoFileComp)
		default:
			return
		}
		if err := c.RegisterFlagCompletionFunc(f.Name, fn); err != nil {
			// Only a flag registered twice fails, which GetFlagCompletionFunc rules out: a bug.
			panic(err)
		}
	}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { register(root, f) })
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { register(c, f) })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeGroups lists the groups under /consumers with the command line's connection settings
// (flags, environment, config file), within completionTimeout. Any failure is no candidates and
// no output: completion must never print into, or hang, a shell.
func completeGroups(d *deps, g *globalOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if err := g.load(c, d); err != nil {
			return nil, none
		}
		d.logger = slog.New(slog.DiscardHandler)
		g.zkConnections = 1
		g.zkSessionTimeout = completionTimeout
		ctx, cancel := context.WithTimeout(c.Context(), completionTimeout)
		defer cancel()
		src, err := d.stores.OpenLegacy(ctx, g, d)
		if err != nil {
			return nil, none
		}
		defer src.Close()
		groups, err := src.Store.ListGroups(ctx)
		if err != nil {
			return nil, none
		}
		// --group takes a comma-separated list: complete its last name.
		done := ""
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			done, toComplete = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, name := range groups {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, done+name)
			}
		}
		return out, none
	}
}
