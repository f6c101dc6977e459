package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// targetPrefix prefixes the target cluster's connection flags: --target-kafka,
// --target-kafka-tls, --target-command-config...
const targetPrefix = "target-"

// targetOptions are plan's, copy's and verify's flags for a target cluster that is not the one
// the znodes refer to: MirrorMaker 2 replicates the source (--kafka) into it, and every
// ZooKeeper offset is translated into its log through MirrorMaker 2's offset syncs.
type targetOptions struct {
	bootstrap string
	version   string
	sec       kafkaSecurityFlags
	// security is sec checked, with its secrets read (validate).
	security kafkaconn.Security

	sourceAlias, targetAlias string
	policy, separator        string
	syncsOn                  string // offset-syncs.topic.location: source or target
	lagMax                   int64
	// follow, when set (dual-commit), is how often the offset syncs are read again.
	follow time.Duration
}

// targetOpener opens the target cluster and reads the offset syncs; tests replace it.
type targetOpener func(ctx context.Context, g *globalOptions, t *targetOptions, d *deps) (migrate.KafkaStore, migrate.Translator, func(), error)

func (t *targetOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&t.bootstrap, "target-kafka", "", "migrate into this cluster, which MirrorMaker 2 replicates --kafka into: bootstrap servers; "+
		"every ZooKeeper offset is translated into its log through MirrorMaker 2's offset syncs (docs/mirrormaker2.md)")
	f.StringVar(&t.version, "target-kafka-version", "auto", `the target's Kafka protocol version, e.g. 4.1.0, or "auto" to negotiate`)
	t.sec.prefix = targetPrefix
	t.sec.addFlags(f)
	f.StringVar(&t.sourceAlias, "mm2-source-alias", "", "MirrorMaker 2's alias of the source cluster (the default replication policy names the target's topics after it, MirrorMaker 2 its checkpoints topic <alias>.checkpoints.internal, and its offset-syncs topic on the target mm2-offset-syncs.<alias>.internal)")
	f.StringVar(&t.targetAlias, "mm2-target-alias", "", "MirrorMaker 2's alias of the target cluster (its offset-syncs topic on the source is mm2-offset-syncs.<alias>.internal)")
	f.StringVar(&t.policy, "replication-policy", mm2.PolicyDefault, "MirrorMaker 2's replication policy: default (the target's topic is <source alias>.<topic>) or identity (the same name)")
	f.StringVar(&t.separator, "replication-policy-separator", ".", "MirrorMaker 2's replication.policy.separator: in the default policy's topic names, and in its internal topics' (offset syncs, checkpoints) under either policy")
	f.StringVar(&t.syncsOn, "mm2-offset-syncs-location", "source", "the cluster holding the offset-syncs topic, as MirrorMaker 2's offset-syncs.topic.location: source (--kafka) or target")
	f.Int64Var(&t.lagMax, "mm2-offset-lag-max", mm2log.DefaultOffsetLagMax, "MirrorMaker 2's offset.lag.max: a ZooKeeper offset further past the latest sync is replication-behind")
}

// replication is the translation a plan records in its cluster, so that copy refuses a plan
// translated another way.
func (t *targetOptions) replication() *migrate.Replication {
	r := &migrate.Replication{SourceAlias: t.sourceAlias, TargetAlias: t.targetAlias, Policy: t.policy, SyncsOn: t.syncsOn, OffsetLagMax: t.lagMax}
	if t.policy == mm2.PolicyDefault {
		r.Separator = t.separator
	}
	return r
}

// enabled reports whether a target cluster was given.
func (t *targetOptions) enabled() bool { return t.bootstrap != "" }

// mm2Policy is the replication policy the flags name.
func (t *targetOptions) mm2Policy() mm2.Policy {
	return mm2.Policy{Name: t.policy, SourceAlias: t.sourceAlias, Separator: t.separator}
}

// validate checks the target's flags and reads its secrets; it makes no network call. Without
// --target-kafka a target or MirrorMaker 2 flag is refused: a setting silently unused hides a
// mistake.
func (t *targetOptions) validate(fs *pflag.FlagSet, getenv func(string) string) error {
	if !t.enabled() {
		var set string
		fs.VisitAll(func(f *pflag.Flag) {
			if set == "" && givenOutside(fs, f.Name) && (strings.HasPrefix(f.Name, targetPrefix) || strings.HasPrefix(f.Name, "mm2-") || strings.HasPrefix(f.Name, "replication-policy")) {
				set = f.Name
			}
		})
		if set != "" {
			return fmt.Errorf("--%s is for a target cluster MirrorMaker 2 replicates into: it needs --target-kafka", set)
		}
		return nil
	}
	switch {
	case t.syncsOn != "source" && t.syncsOn != "target":
		return fmt.Errorf("--mm2-offset-syncs-location: %q is not one of [source target]", t.syncsOn)
	case t.syncsOn == "source" && t.targetAlias == "":
		return errors.New("--target-kafka needs --mm2-target-alias: MirrorMaker 2's offset syncs on the source are in mm2-offset-syncs.<target alias>.internal")
	case t.syncsOn == "target" && t.sourceAlias == "":
		return errors.New("--mm2-offset-syncs-location target needs --mm2-source-alias: MirrorMaker 2's offset syncs on the target are in mm2-offset-syncs.<source alias>.internal")
	}
	if err := t.mm2Policy().Validate(); err != nil {
		return fmt.Errorf("--replication-policy: %w (the default policy needs --mm2-source-alias)", err)
	}
	if t.lagMax < 1 {
		return fmt.Errorf("--mm2-offset-lag-max: %d, expected at least 1", t.lagMax)
	}
	// The adjust is of the source's offsets, before the translation: verify and dual-commit
	// would add it after (translate(zk)+adjust, not translate(zk+adjust)), past a record the
	// consumer has not read whenever the syncs lie apart. Refused here, before any connection.
	if f := fs.Lookup("offset-adjust"); f != nil && f.Value.String() != "0" {
		return fmt.Errorf("--offset-adjust %s cannot be applied to offsets translated into another cluster's log (--target-kafka): migrate in place, or leave it out", f.Value)
	}
	if fs.Lookup("mm2-offset-syncs-interval") != nil && t.follow < time.Second {
		return fmt.Errorf("--mm2-offset-syncs-interval: %s is too short, expected at least 1s", t.follow)
	}
	var err error
	t.security, err = t.sec.security(getenv)
	return err
}

// migration is what plan, copy and dual-commit read and write: the legacy source, the Kafka
// cluster commits go to, and with a target the translation into its log (nil in place), which
// the legacy store is then read through.
type migration struct {
	src   *legacy.Source
	kafka migrate.KafkaStore
	tr    migrate.Translator
	close func()
}

// syncsTopic is the offset-syncs topic. MirrorMaker 2 names it after the cluster that does not
// hold it (MirrorSourceConfig.offsetSyncsTopic): the target's alias on the source (the default
// location), the source's on the target.
func (t *targetOptions) syncsTopic() string {
	if t.syncsOn == "target" {
		return mm2log.TopicSeparated(t.sourceAlias, t.separator)
	}
	return mm2log.TopicSeparated(t.targetAlias, t.separator)
}

// openMigration opens the migration the flags name.
func openMigration(ctx context.Context, d *deps, g *globalOptions, t *targetOptions) (migration, error) {
	if !t.enabled() {
		src, kafka, closeAll, err := openStores(ctx, d, g)
		return migration{src: src, kafka: kafka, close: closeAll}, err
	}
	src, err := d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return migration{}, err
	}
	kafka, tr, closeTarget, err := d.target(ctx, g, t, d)
	if err != nil {
		src.Close()
		return migration{}, err
	}
	src.Store, src.Identity.Replication = migrate.Translated(src.Store, tr), t.replication()
	return migration{src: src, kafka: kafka, tr: tr, close: func() { closeTarget(); src.Close() }}, nil
}

// openTarget opens the target cluster and reads MirrorMaker 2's offset syncs from the cluster
// that holds them.
func openTarget(ctx context.Context, g *globalOptions, t *targetOptions, d *deps) (migrate.KafkaStore, migrate.Translator, func(), error) {
	bootstrap, err := kafkaconn.ParseBootstrap(t.bootstrap)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--target-kafka: %w", err)
	}
	warnClearPassword(d.logger, t.security, targetPrefix)
	c, err := kafkawriter.Open(ctx, kafkawriter.Config{Bootstrap: bootstrap, ClientID: g.clientID, Version: t.version,
		Logger: d.logger, Security: t.security, LibraryDebug: g.debug})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("target cluster %s: %w", t.bootstrap, err)
	}
	closeClient := func() {
		if err := c.Close(); err != nil {
			d.logger.Warn("closing the target Kafka client", "err", err)
		}
	}
	recs, closeRecords, err := openRecords(ctx, g, t, d)
	if err != nil {
		closeClient()
		return nil, nil, nil, err
	}
	closeAll := func() { closeRecords(); closeClient() }
	next := func(ctx context.Context) (*mm2log.Translator, error) {
		tr, err := recs.Next(ctx)
		if err != nil {
			return nil, err
		}
		level := slog.LevelInfo
		if t.follow > 0 {
			level = slog.LevelDebug // dual-commit reads them every --mm2-offset-syncs-interval
		}
		d.logger.Log(ctx, level, "read MirrorMaker 2's offset syncs and checkpoints", "syncs", tr.Syncs(), "checkpoints", tr.Checkpoints())
		return tr.WithTargetEnds(ctx, c)
	}
	tr, err := next(ctx)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	if t.follow <= 0 {
		return c, tr, closeAll, nil
	}
	live := mm2log.NewLive(tr)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		live.Follow(fctx, t.follow, next, func(err error) { d.logger.Warn(err.Error()) })
	}()
	return c, live, func() { stop(); <-done; closeAll() }, nil
}

// openRecords opens the readers of MirrorMaker 2's records, for the run: the offset syncs on
// the cluster --mm2-offset-syncs-location names, the checkpoints on the target. The syncs are
// read whole once, then (dual-commit, every --mm2-offset-syncs-interval) only what was written
// since: a copy's re-checks translate with the syncs of its start (later syncs only pin offsets
// the earlier ones rounded down).
func openRecords(ctx context.Context, g *globalOptions, t *targetOptions, d *deps) (*mm2log.Records, func(), error) {
	var opened []*mm2log.Reader
	closeAll := func() {
		for _, r := range opened {
			if err := r.Close(); err != nil {
				d.logger.Warn("closing a reader of MirrorMaker 2's records", "err", err)
			}
		}
	}
	open := func(cluster, servers, version string, sec kafkaconn.Security) (*mm2log.Reader, error) {
		cfg := mm2log.Config{Cluster: cluster, ClientID: g.clientID, Version: version, Logger: d.logger, Security: sec}
		var err error
		if cfg.Bootstrap, err = kafkaconn.ParseBootstrap(servers); err != nil {
			return nil, err
		}
		r, err := mm2log.Open(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s at %s: %w", cluster, servers, err)
		}
		opened = append(opened, r)
		return r, nil
	}
	recs := &mm2log.Records{SyncsTopic: t.syncsTopic(), Policy: t.mm2Policy(), LagMax: t.lagMax, Logger: d.logger}
	var target *mm2log.Reader
	var err error
	if t.syncsOn == "target" || t.sourceAlias != "" {
		if target, err = open("the target cluster", t.bootstrap, t.version, t.security); err != nil {
			return nil, nil, err
		}
	}
	if t.sourceAlias != "" { // the checkpoints topic is named after it
		recs.Checkpoints, recs.CheckpointsTopic = target, mm2log.CheckpointsTopic(t.sourceAlias, t.separator)
	}
	if t.syncsOn == "target" {
		recs.Syncs = target
		return recs, closeAll, nil
	}
	if err := g.needKafka(); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("%w: the offset syncs are on the source cluster (--mm2-offset-syncs-location source)", err)
	}
	if recs.Syncs, err = open("the source cluster", g.kafkaBootstrap, g.kafkaVersion, g.kafkaSecurity); err != nil {
		closeAll()
		return nil, nil, err
	}
	return recs, closeAll, nil
}
