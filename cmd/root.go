// Package cmd is zk2kafka's command line: Cobra commands, configuration, output and exit codes.
// It holds no ZooKeeper or Kafka protocol code: that lives in the adapters, reached through deps.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/cobra"
)

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	d := defaultDeps(stdout, stderr)
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		var ee *exitError
		if !(errors.As(err, &ee) && ee.silent) {
			fmt.Fprintf(stderr, "zk2kafka: %v\n", err)
		}
	}
	return exitCode(err)
}

const rootLong = `zk2kafka moves Kafka consumer-group offsets out of the legacy ZooKeeper store
(/consumers/<group>/offsets/<topic>/<partition>) into Kafka's own offset store
(__consumer_offsets, written through the group coordinator), safely and provably.

Kafka 4.0 removed ZooKeeper, and Kafka's own migration does not move /consumers: every group
still on ZooKeeper loses its position when ZooKeeper goes. The workflow:

  zk2kafka migrate plan         read both stores, classify every partition, write nothing
  zk2kafka migrate copy         write the plan into Kafka (dry run unless --execute)
  zk2kafka migrate dual-commit  keep Kafka in step with ZooKeeper while consumers roll over
  zk2kafka migrate verify       compare both stores per partition, for people and CI
  zk2kafka export               archive ZooKeeper (or Kafka) offsets to JSON or CSV
  zk2kafka restore              put an export, a CSV or a copy backup back (dry run unless --execute)

Configuration comes from flags, then ZK2KAFKA_* environment variables (ZK2KAFKA_KAFKA for
--kafka, ZK2KAFKA_ZK_SESSION_TIMEOUT for --zk-session-timeout), then a YAML file named by
--config whose keys are the flag names.

Secured clusters: Kafka over TLS or mutual TLS, SASL PLAIN, SCRAM-SHA-256/512, GSSAPI (keytab
or ticket cache) and OAUTHBEARER (OIDC client credentials), by flags or by Kafka's own
client.properties (--command-config, JKS, PKCS12 or PEM stores); ZooKeeper with digest auth and
over TLS (--zk-tls flags, or --zk-tls-config-file in Kafka's zookeeper.ssl.* names). Brokers
from Kafka 0.10.2 on (before 0.11, dual-commit needs --keepalive-interval).

Exit codes:
  0  clean: the plan is safe, the copy is complete, the stores agree
  1  error: bad input, a store unreachable, a write failed
  2  the run worked and found a problem: a blocked or unsafe plan, drift between stores`

func newRootCmd(d *deps, g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "zk2kafka",
		Short: "Migrate Kafka consumer-group offsets from ZooKeeper into Kafka",
		Long:  rootLong,
		Example: `  # see what would happen, write nothing
  zk2kafka migrate plan --zk zk1:2181/kafka --kafka broker1:9092

  # the same, from a config file, as JSON for a script
  zk2kafka --config prod.yaml migrate plan --output json

  # a Kerberos cluster, with the client.properties Kafka's own tools use
  zk2kafka --zk zk1:2181 --kafka broker1.example.com:9092 --command-config client.properties migrate plan

  # ZooKeeper on its TLS port, with Kafka's zookeeper.ssl.* file
  zk2kafka --zk zk1:2182 --zk-tls-config-file zk-tls.properties --kafka broker1:9093 --command-config client.properties migrate verify`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error { return g.load(c, d) },
	}
	// --version prints what the version command prints; a quoted literal, so no version string is
	// read as template syntax.
	root.Version = d.build.Version
	root.SetVersionTemplate("{{" + strconv.Quote(d.build.text()) + "}}")
	root.SetOut(d.stdout)
	root.SetErr(d.stderr)
	root.SetFlagErrorFunc(flagError)
	g.addFlags(root)
	root.AddCommand(newVersionCmd(d.build), newMigrateCmd(d, g), newExportCmd(d, g), newRestoreCmd(d, g))
	registerCompletions(root, d, g)
	return root
}

// load applies the environment and the config file to the flags the command line left unset,
// then checks them and builds the logger: before every command, and before the completion of
// --group reads ZooKeeper.
func (g *globalOptions) load(c *cobra.Command, d *deps) error {
	if g.configFile == "" {
		g.configFile = os.Getenv(envPrefix + "_CONFIG")
	}
	if err := applyConfig(c, g.configFile); err != nil {
		return err
	}
	return g.setup(d)
}

// deps are what commands reach the outside world through; tests replace them.
type deps struct {
	stdout, stderr io.Writer
	logger         *slog.Logger
	stores         storeOpener
	// viaTopic opens the __consumer_offsets reader of verify --via-topic (migrate.CommittedSource).
	viaTopic viaTopicOpener
	// target opens the target cluster of --target-kafka and reads MirrorMaker 2's offset syncs.
	target targetOpener
	// terminal reports whether stderr is a terminal, for the progress bar (nil: ask the OS).
	terminal func() bool
	// build is this binary's version, printed by version and written into commit metadata.
	build build
}
