package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
)

// newDevCmd holds developer tooling for the local stack; hidden from --help.
func newDevCmd(d *deps, g *globalOptions) *cobra.Command {
	c := &cobra.Command{Use: "dev", Short: "Developer tooling for the local stack", Hidden: true,
		Args: subcommandArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	c.AddCommand(newSeedCmd(d, g))
	return c
}

type seedOptions struct {
	spec seed.Spec
	hold bool
}

func newSeedCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &seedOptions{}
	c := &cobra.Command{
		Use:   "seed",
		Short: "Create topics, produce records and write legacy ZooKeeper offsets like the Scala consumer",
		Example: `  zk2kafka --config .stack/run/zk/zk2kafka.yaml dev seed --groups 100 --topics 10 --topics-per-group 10 --partitions 10
  zk2kafka dev seed --groups 3 --live-groups 1 --hold   # keep a live legacy registration until Ctrl-C`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runSeed(c.Context(), d, g, o) },
	}
	f := c.Flags()
	f.Int64Var(&o.spec.Seed, "seed", 1, "seed of the offsets (same seed, same data)")
	f.IntVar(&o.spec.Groups, "groups", 3, "consumer groups")
	f.IntVar(&o.spec.Topics, "topics", 2, "topics in the shared pool")
	f.IntVar(&o.spec.TopicsPerGroup, "topics-per-group", 2, "topics each group has offsets for")
	f.Int32Var(&o.spec.Partitions, "partitions", 4, "partitions per topic")
	f.IntVar(&o.spec.Records, "records", 100, "records produced to each partition")
	f.StringVar(&o.spec.GroupPrefix, "group-prefix", "", "group name prefix (default "+seed.DefaultGroupPrefix+")")
	f.StringVar(&o.spec.TopicPrefix, "topic-prefix", "", "topic name prefix (default "+seed.DefaultTopicPrefix+")")
	f.IntVar(&o.spec.LiveGroups, "live-groups", 0, "groups that also get live legacy consumer registrations (ephemeral)")
	f.BoolVar(&o.spec.SkipKafka, "skip-kafka", false, "only write ZooKeeper offsets")
	f.BoolVar(&o.hold, "hold", false, "keep the ZooKeeper session (and so the live registrations) until interrupted")
	return c
}

func runSeed(ctx context.Context, d *deps, g *globalOptions, o *seedOptions) error {
	if err := g.needZK(); err != nil {
		return err
	}
	var bootstrap []string
	if !o.spec.SkipKafka {
		if err := g.needKafka(); err != nil {
			return err
		}
		var err error
		if bootstrap, err = kafkawriter.ParseBootstrap(g.kafkaBootstrap); err != nil {
			return err
		}
	}
	res, err := seed.Run(ctx, g.zkServers, bootstrap, o.spec, d.logger)
	if err != nil {
		return err
	}
	defer res.Close()
	fmt.Fprintf(d.stdout, "seeded %d offsets (%d groups), %d records produced\n", res.Offsets, res.Spec.Groups, res.Records)
	if o.hold && len(res.Live) > 0 {
		hold, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Fprintln(d.stderr, "holding live registrations until interrupted")
		<-hold.Done()
	}
	return nil
}
