//go:build zk2kafkadev

// Command seed writes legacy consumer offsets into ZooKeeper the way the Scala consumer did,
// after creating the topics and producing records to them, for the local stack, the demo and
// the benchmarks. It was `zk2kafka dev seed`; it is a command of its own, behind the
// zk2kafkadev build tag, so neither the zk2kafka binary nor `go install ./...` carries it:
//
//	go build -tags zk2kafkadev -o .stack/bin/seed ./scripts/seed
//	.stack/bin/seed -zk "$ZK" -kafka "$KAFKA" -groups 3 -live-groups 1 -hold
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/zk2kafka/zk2kafka/internal/clientprops"
	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/seed"
)

type options struct {
	zk, kafka     string
	logLevel      slog.Level
	spec          seed.Spec
	hold          bool
	commandConfig string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "seed: %v\n", err)
		os.Exit(1)
	}
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	f := flag.NewFlagSet("seed", flag.ContinueOnError)
	f.SetOutput(stderr)
	f.StringVar(&o.zk, "zk", os.Getenv("ZK"), "ZooKeeper servers with an optional chroot (default $ZK, as the stack's env file sets it)")
	f.StringVar(&o.kafka, "kafka", os.Getenv("KAFKA"), "Kafka bootstrap servers (default $KAFKA)")
	f.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	f.Int64Var(&o.spec.Seed, "seed", 1, "seed of the offsets (same seed, same data)")
	f.IntVar(&o.spec.Groups, "groups", 3, "consumer groups")
	f.IntVar(&o.spec.Topics, "topics", 2, "topics in the shared pool")
	f.IntVar(&o.spec.TopicsPerGroup, "topics-per-group", 2, "topics each group has offsets for")
	var partitions int
	f.IntVar(&partitions, "partitions", 4, "partitions per topic")
	f.IntVar(&o.spec.Records, "records", 100, "records produced to each partition")
	f.StringVar(&o.spec.GroupPrefix, "group-prefix", "", "group name prefix (default "+seed.DefaultGroupPrefix+")")
	f.StringVar(&o.spec.TopicPrefix, "topic-prefix", "", "topic name prefix (default "+seed.DefaultTopicPrefix+")")
	f.IntVar(&o.spec.LiveGroups, "live-groups", 0, "groups that also get live legacy consumer registrations (ephemeral)")
	f.BoolVar(&o.spec.SkipKafka, "skip-kafka", false, "only write ZooKeeper offsets")
	f.StringVar(&o.commandConfig, "command-config", "", "Kafka client.properties for a secured cluster (as zk2kafka --command-config)")
	f.BoolVar(&o.hold, "hold", false, "keep the ZooKeeper session (and so the live registrations) until interrupted")
	if err := f.Parse(args); err != nil {
		return nil, err
	}
	if f.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", f.Args())
	}
	if partitions < 1 || partitions > 1<<31-1 {
		return nil, fmt.Errorf("-partitions %d: want 1 or more", partitions)
	}
	o.spec.Partitions = int32(partitions)
	if o.commandConfig != "" {
		c, err := clientprops.KafkaClient(o.commandConfig)
		if err == nil {
			err = c.Security.Validate()
		}
		if err != nil {
			return nil, err
		}
		o.spec.Security = c.Security
	}
	if o.zk == "" {
		return nil, fmt.Errorf("no ZooKeeper: set -zk or $ZK")
	}
	if o.kafka == "" && !o.spec.SkipKafka {
		return nil, fmt.Errorf("no Kafka: set -kafka or $KAFKA, or -skip-kafka")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	var bootstrap []string
	if !o.spec.SkipKafka {
		if bootstrap, err = kafkaconn.ParseBootstrap(o.kafka); err != nil {
			return fmt.Errorf("-kafka: %w", err)
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	res, err := seed.Run(ctx, o.zk, bootstrap, o.spec, log)
	if err != nil {
		return err
	}
	defer res.Close()
	fmt.Fprintf(stdout, "seeded %d offsets (%d groups), %d records produced\n", res.Offsets, res.Spec.Groups, res.Records)
	if o.hold && len(res.Live) > 0 {
		fmt.Fprintln(stderr, "holding live registrations until interrupted")
		<-ctx.Done()
	}
	return nil
}
