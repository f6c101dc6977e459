package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// storeOpener opens the adapters; command tests replace it with in-memory fakes.
type storeOpener interface {
	OpenLegacy(ctx context.Context, g *globalOptions, d *deps) (*legacy.Source, error)
	OpenKafka(ctx context.Context, g *globalOptions, d *deps) (migrate.KafkaStore, func(), error)
}

// viaTopicOpener opens the migrate.CommittedSource of verify --via-topic on the configured
// Kafka cluster.
type viaTopicOpener func(ctx context.Context, g *globalOptions, d *deps) (migrate.CommittedSource, func(), error)

func defaultDeps(stdout, stderr io.Writer) *deps {
	return &deps{stdout: stdout, stderr: stderr, stores: realStores{}, viaTopic: openViaTopic, target: openTarget, build: readBuild()}
}

// realStores opens the real ZooKeeper and Kafka adapters.
type realStores struct{}

// OpenLegacy opens the legacy source the flags name, once per run, and says what a data
// directory read gave.
func (realStores) OpenLegacy(ctx context.Context, g *globalOptions, d *deps) (*legacy.Source, error) {
	if err := g.needZK(); err != nil {
		return nil, err
	}
	cfg, err := g.legacyConfig(d)
	if err != nil {
		return nil, err
	}
	src, err := legacy.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, w := range src.Warnings {
		d.logger.Warn(w)
	}
	for _, n := range src.Notes {
		fmt.Fprintf(d.stderr, "zk2kafka: %s\n", n)
	}
	return src, nil
}

// legacyConfig is the legacy source the flags name.
func (g *globalOptions) legacyConfig(d *deps) (legacy.Config, error) {
	cfg := legacy.Config{ZooKeeper: zkreader.Config{
		Servers:        g.zkServers,
		SessionTimeout: g.zkSessionTimeout,
		Connections:    g.zkConnections,
		InFlight:       g.zkInFlight,
		Auth:           g.zkAuth,
		TLS:            g.zkTLS,
		Logger:         d.logger,
		// Benchmarks only (envOneShotWatches).
		NoPersistentWatch: g.zkOneShotWatches,
	}}
	if g.zkData.path != "" {
		dc, err := g.zkData.config(g.legacyStopped)
		if err != nil {
			return cfg, err
		}
		cfg.DataDir = &dc
	}
	if g.isStorm() {
		s := g.storm()
		cfg.Storm = &s
	}
	return cfg, nil
}

func (realStores) OpenKafka(ctx context.Context, g *globalOptions, d *deps) (migrate.KafkaStore, func(), error) {
	if err := g.needKafka(); err != nil {
		return nil, nil, err
	}
	bootstrap, err := kafkaconn.ParseBootstrap(g.kafkaBootstrap)
	if err != nil {
		return nil, nil, err
	}
	c, err := kafkawriter.Open(ctx, kafkawriter.Config{
		Bootstrap: bootstrap,
		ClientID:  g.clientID,
		Version:   g.kafkaVersion,
		Logger:    d.logger,
		Security:  g.kafkaSecurity,

		LibraryDebug: g.debug,
	})
	if err != nil {
		return nil, nil, err
	}
	return c, func() {
		if err := c.Close(); err != nil {
			d.logger.Warn("closing the Kafka client", "err", err)
		}
	}, nil
}

// openViaTopic opens the independent reader of verify --via-topic: it decodes
// __consumer_offsets itself instead of trusting OffsetFetch.
func openViaTopic(ctx context.Context, g *globalOptions, d *deps) (migrate.CommittedSource, func(), error) {
	if err := g.needKafka(); err != nil {
		return nil, nil, err
	}
	bootstrap, err := kafkaconn.ParseBootstrap(g.kafkaBootstrap)
	if err != nil {
		return nil, nil, err
	}
	r, err := offsetlog.Open(ctx, offsetlog.Config{Bootstrap: bootstrap, ClientID: g.clientID, Version: g.kafkaVersion,
		Logger: d.logger, Security: g.kafkaSecurity})
	if err != nil {
		return nil, nil, err
	}
	return topicSource{r}, func() {
		if err := r.Close(); err != nil {
			d.logger.Warn("closing the __consumer_offsets reader", "err", err)
		}
	}, nil
}

// topicSource adapts offsetlog's replayed commits to the offsets verify compares.
type topicSource struct{ r *offsetlog.Reader }

func (s topicSource) Committed(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	offs, _, err := s.r.ReadGroups(ctx, groups)
	if errors.Is(err, offsetlog.ErrNoOffsetsTopic) {
		offs, err = offsetlog.Offsets{}, nil // no group was ever coordinated: no commit anywhere
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", offsetlog.Topic, err)
	}
	out := make(map[string]migrate.GroupState, len(groups))
	for _, g := range groups {
		s := migrate.GroupState{Committed: map[migrate.TopicPartition]int64{}}
		for tp, c := range offs[g] {
			s.Committed[tp] = c.Offset
			if c.Metadata != "" {
				if s.Metadata == nil {
					s.Metadata = map[migrate.TopicPartition]string{}
				}
				s.Metadata[tp] = c.Metadata
			}
		}
		out[g] = s
	}
	return out, nil
}

// openStores opens ZooKeeper, then Kafka; closeAll closes whatever was opened. On an error
// nothing is left open.
func openStores(ctx context.Context, d *deps, g *globalOptions) (src *legacy.Source, kafka migrate.KafkaStore, closeAll func(), err error) {
	src, err = d.stores.OpenLegacy(ctx, g, d)
	if err != nil {
		return nil, nil, nil, err
	}
	kafka, closeKafka, err := d.stores.OpenKafka(ctx, g, d)
	if err != nil {
		src.Close()
		return nil, nil, nil, err
	}
	return src, kafka, func() { closeKafka(); src.Close() }, nil
}
