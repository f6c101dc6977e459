package cmd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// envPrefix prefixes every environment variable: --kafka-version is ZK2KAFKA_KAFKA_VERSION.
const envPrefix = "ZK2KAFKA"

// commandLineOnly are the flags that make a run write or override a safety check. They are taken
// only from the command line: a shared config file or a CI environment variable must never turn
// a dry run into a write.
// Turning off TLS certificate checks is such a switch too, and so is --recheck (it narrows copy's
// re-check before each batch). --dry-run is here beside --execute: a file saying dry-run would
// make every --execute an error (the two together are refused), far from where it was set.
// --allow-empty lifts the refusal of a selection that matches nothing: from a shared file or a
// CI variable it would turn every gate green on nothing again.
var commandLineOnly = map[string]bool{"execute": true, "dry-run": true, "force": true, "replan": true, "mark": true,
	"recheck": true, "kafka-tls-insecure-skip-verify": true, "target-kafka-tls-insecure-skip-verify": true, "allow-empty": true, "legacy-stopped": true}

// applyConfig fills every flag the user did not set on the command line from the environment,
// then from the YAML file, in that order of precedence. This is the only place Viper is used:
// the rest of the code reads plain Go values from the option structs.
func applyConfig(c *cobra.Command, configFile string) error {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if configFile != "" {
		v.SetConfigFile(configFile)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("config file %s: %w", configFile, err)
		}
		if err := checkConfigKeys(c.Root(), v.AllKeys(), configFile); err != nil {
			return err
		}
	}
	var errs []error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "config" || f.Name == "help" || commandLineOnly[f.Name] ||
			len(f.Annotations[commandLineOnlyAnnotation]) > 0 || !v.IsSet(f.Name) {
			return
		}
		if err := setFlag(f, v.Get(f.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s (from %s_%s or the config file): %w", f.Name,
				envPrefix, strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), err))
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[configuredAnnotation] = []string{"true"}
	})
	return errors.Join(errs...)
}

// commandLineOnlyAnnotation marks a flag taken only from the command line by one command, where
// commandLineOnly names flags that are so for every command (markCommandLineOnly).
const commandLineOnlyAnnotation = "zk2kafka-command-line-only"

// markCommandLineOnly makes c's flag name command line only for c.
func markCommandLineOnly(c *cobra.Command, name string) {
	if err := c.Flags().SetAnnotation(name, commandLineOnlyAnnotation, []string{"true"}); err != nil {
		panic(err) // a flag this package defines: a typo is a programming error
	}
}

// configuredAnnotation marks a flag set from the environment or the config file: Changed says
// only the command line.
const configuredAnnotation = "zk2kafka-configured"

// givenOutside reports whether flag name was given at all: on the command line, in the
// environment or in the config file (not left at its default).
func givenOutside(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && (f.Changed || len(f.Annotations[configuredAnnotation]) > 0)
}

// setFlag sets a flag from a config value; a YAML list sets a slice flag element by element.
func setFlag(f *pflag.Flag, val any) error {
	if list, ok := val.([]any); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		val = strings.Join(parts, ",")
	}
	return f.Value.Set(fmt.Sprint(val))
}

// checkConfigKeys rejects a config file key that no command knows: a typo ("kafak") would
// otherwise be ignored silently and the tool would run against defaults.
func checkConfigKeys(root *cobra.Command, keys []string, file string) error {
	known := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	var unknown []string
	for _, k := range keys {
		if err := checkPasswordKey(k, file); err != nil {
			return err
		}
		if commandLineOnly[k] {
			return fmt.Errorf("config file %s: %q is taken only from the command line (--%s), never from a file", file, k, k)
		}
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config file %s: unknown key(s) %s (keys are flag names, e.g. zk, kafka, kafka-version)",
			file, strings.Join(unknown, ", "))
	}
	return nil
}

// globalOptions are the connection settings every command shares.
type globalOptions struct {
	configFile       string
	zkServers        string
	zkSessionTimeout time.Duration
	zkAuth           string
	zkAuthFile       string
	zkConnections    int
	zkInFlight       int
	zkData           dataDirOptions // --zk-data-dir and its companions (datadir.go)
	zkTLSFlags       zkTLSFlags     // --zk-tls and its companions (zktls.go)
	// zkTLS is zkTLSFlags read (by setup); nil: plain TCP.
	zkTLS          *tls.Config
	kafkaBootstrap string
	clientID       string
	kafkaVersion   string
	logLevel       string
	logFormat      string
	debug          bool
	kafkaSec       kafkaSecurityFlags
	layoutFlags    // --layout and the Storm layout's flags (layout.go)
	// legacyStopped is --legacy-stopped: the operator says the legacy consumers are stopped, for
	// the sources that cannot see them (a data directory, the Storm layout).
	legacyStopped bool
	// kafkaSecurity is kafkaSec checked, with the password read (by setup).
	kafkaSecurity kafkaconn.Security
	// zkOneShotWatches keeps dual-commit's watcher on one-shot watches on ZooKeeper 3.6+ too
	// (zkreader.Config.NoPersistentWatch): set by envOneShotWatches, for the benchmark that
	// compares both paths on one server. No flag, no config key: the path is chosen from the
	// servers' versions.
	zkOneShotWatches bool
}

// envOneShotWatches is the hidden switch of zkOneShotWatches, for benchmarks only.
const envOneShotWatches = envPrefix + "_DEV_ONE_SHOT_WATCHES"

// defaultClientID is --client-id's default.
const defaultClientID = "zk2kafka"

func (g *globalOptions) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&g.configFile, "config", "", "YAML config file; its keys are the flag names (env ZK2KAFKA_CONFIG)")
	f.StringVar(&g.zkServers, "zk", "", "ZooKeeper servers with an optional chroot, e.g. zk1:2181,zk2:2181/kafka")
	f.DurationVar(&g.zkSessionTimeout, "zk-session-timeout", 10*time.Second, "ZooKeeper session timeout")
	f.StringVar(&g.zkAuth, "zk-auth", "", "ZooKeeper digest auth as digest:user:password (prefer ZK2KAFKA_ZK_AUTH or --zk-auth-file)")
	f.StringVar(&g.zkAuthFile, "zk-auth-file", "", "file holding the ZooKeeper digest auth (digest:user:password)")
	f.IntVar(&g.zkConnections, "zk-connections", 0, fmt.Sprintf("ZooKeeper sessions to read over (each pipelines its requests; ZooKeeper allows 60 per client address by default); 0: %d on ZooKeeper 3.6+ (multiRead), %d on older servers", zkreader.MultiConnections, zkreader.SingleConnections))
	f.IntVar(&g.zkInFlight, "zk-in-flight", 0, fmt.Sprintf("ZooKeeper requests outstanding at once, over all connections; 0: %d on ZooKeeper 3.6+ (multiRead), %d on older servers", zkreader.MultiInFlight, zkreader.SingleInFlight))
	g.zkData.addFlags(root)
	g.zkTLSFlags.addFlags(root)
	f.BoolVar(&g.legacyStopped, "legacy-stopped", false, "the legacy consumers are stopped, for sources that cannot see them running: "+
		"--zk-data-dir (its ids/owners registrations then do not gate; copy requires it) and --layout storm (a topology registers nothing; "+
		"without it copy blocks the group as live); command line only")
	f.StringVar(&g.kafkaBootstrap, "kafka", "", "Kafka bootstrap servers, e.g. broker1:9092,broker2:9092")
	f.StringVar(&g.clientID, "client-id", defaultClientID, "Kafka client id (default the client.id of --command-config, else zk2kafka)")
	f.StringVar(&g.kafkaVersion, "kafka-version", "auto", `Kafka protocol version, e.g. 3.9.0, or "auto" to negotiate`)
	f.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn or error (logs go to stderr)")
	f.StringVar(&g.logFormat, "log-format", "text", "log format: text (key=value lines) or json (one object per line, for log shippers)")
	f.BoolVar(&g.debug, "debug", false, "debug logs, including the Kafka and ZooKeeper client libraries' own")
	g.kafkaSec.addFlags(root.PersistentFlags())
	g.layoutFlags.addFlags(root)
}

// setup validates the global options and builds the logger. It runs before any network call.
func (g *globalOptions) setup(d *deps) error {
	switch {
	case g.legacyStopped && g.zkData.path == "" && !g.isStorm():
		return errors.New("--legacy-stopped is for sources that cannot see the legacy consumers (--zk-data-dir, --layout storm): " +
			"with --zk, their live registrations are read from ZooKeeper")
	case g.zkData.path != "" && g.isStorm():
		return errors.New("--layout storm reads a live ZooKeeper: a data directory (--zk-data-dir) keeps /consumers only")
	}
	logger, err := g.newLogger(d.stderr)
	if err != nil {
		return err
	}
	d.logger = logger
	if err := g.layoutFlags.check(); err != nil {
		return err
	}
	if err := g.setupZK(); err != nil {
		return err
	}
	return g.setupKafka(d.logger)
}

// newLogger builds the logger --log-level, --log-format and --debug ask for.
func (g *globalOptions) newLogger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", g.logLevel)
	}
	if g.debug {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: logDurations(g.logFormat == "json")}
	switch g.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not one of text, json", g.logFormat)
}

// setupZK checks the ZooKeeper settings, reads --zk-auth-file and builds the ZooKeeper TLS
// configuration.
func (g *globalOptions) setupZK() error {
	if g.zkSessionTimeout < time.Second {
		return fmt.Errorf("--zk-session-timeout: %s is too short, expected at least 1s", g.zkSessionTimeout)
	}
	if g.zkConnections < 0 || g.zkConnections > 64 {
		return fmt.Errorf("--zk-connections: %d is out of range, expected 1..64 (or 0: by ZooKeeper's version)", g.zkConnections)
	}
	if g.zkInFlight < 0 {
		return fmt.Errorf("--zk-in-flight: %d is out of range, expected at least 1 (or 0: by ZooKeeper's version)", g.zkInFlight)
	}
	if g.zkAuth == "" && g.zkAuthFile != "" {
		b, err := os.ReadFile(g.zkAuthFile)
		if err != nil {
			return fmt.Errorf("--zk-auth-file: %w", err)
		}
		g.zkAuth = strings.TrimSpace(string(b))
	}
	if g.zkAuth != "" && !strings.HasPrefix(g.zkAuth, "digest:") {
		return errors.New(`--zk-auth: expected "digest:user:password"`)
	}
	var err error
	if g.zkTLS, err = g.zkTLSFlags.config(); err != nil {
		return err
	}
	if g.zkTLS != nil && g.zkData.path != "" {
		return errZKTLSDataDir
	}
	g.zkOneShotWatches = os.Getenv(envOneShotWatches) == "1"
	return nil
}

// setupKafka builds the Kafka security settings and takes the command config's client.id.
func (g *globalOptions) setupKafka(logger *slog.Logger) error {
	sec, err := g.kafkaSec.security(os.Getenv)
	if err != nil {
		return err
	}
	g.kafkaSecurity = sec
	if id := g.kafkaSec.fileClientID; id != "" && g.clientID == defaultClientID {
		g.clientID = id // the command config's client.id, unless --client-id says otherwise
	}
	warnClearPassword(logger, sec, "")
	return nil
}

// warnClearPassword warns when sec sends a password in clear text: SASL PLAIN without TLS.
// prefix is the flags' ("" or targetPrefix).
func warnClearPassword(logger *slog.Logger, sec kafkaconn.Security, prefix string) {
	if sec.Mechanism == kafkaconn.MechanismPlain && !sec.TLS {
		cluster := "kafka"
		if prefix != "" {
			cluster = "the target kafka"
		}
		logger.Warn(cluster + " SASL PLAIN without TLS sends the password in clear text: add --" + prefix + "kafka-tls")
	}
}

// needZK and needKafka give one clear line when a connection setting is missing.
func (g *globalOptions) needZK() error {
	if err := g.zkData.check(g.zkServers); err != nil || g.zkData.path != "" {
		return err
	}
	if g.zkServers == "" {
		return errors.New("no ZooKeeper servers: pass --zk host:port[/chroot] (or --zk-data-dir PATH to read a copy of its data directory), set ZK2KAFKA_ZK, or put zk: in --config")
	}
	return nil
}

func (g *globalOptions) needKafka() error {
	if g.kafkaBootstrap == "" {
		return errors.New("no Kafka bootstrap servers: pass --kafka host:port, set ZK2KAFKA_KAFKA, or put kafka: in --config")
	}
	return nil
}
