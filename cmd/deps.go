package cmd

import (
	"context"
	"io"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// kafkaStore is everything the commands need of Kafka.
type kafkaStore interface {
	migrate.KafkaState
	migrate.OffsetCommitter
}

// storeOpener opens the adapters; command tests replace it with in-memory fakes.
type storeOpener interface {
	OpenLegacy(ctx context.Context, g *globalOptions, d *deps) (migrate.LegacyStore, func(), error)
	OpenKafka(ctx context.Context, g *globalOptions, d *deps) (kafkaStore, func(), error)
}

func defaultDeps(stdout, stderr io.Writer) *deps {
	return &deps{stdout: stdout, stderr: stderr, stores: realStores{}}
}

// realStores opens the real ZooKeeper and Kafka adapters.
type realStores struct{}

func (realStores) OpenLegacy(ctx context.Context, g *globalOptions, d *deps) (migrate.LegacyStore, func(), error) {
	if err := g.needZK(); err != nil {
		return nil, nil, err
	}
	r, err := zkreader.Open(ctx, zkreader.Config{
		Servers:        g.zkServers,
		SessionTimeout: g.zkSessionTimeout,
		Connections:    g.zkConnections,
		InFlight:       g.zkInFlight,
		Auth:           g.zkAuth,
		Logger:         d.logger,
	})
	if err != nil {
		return nil, nil, err
	}
	return r, r.Close, nil
}

func (realStores) OpenKafka(ctx context.Context, g *globalOptions, d *deps) (kafkaStore, func(), error) {
	if err := g.needKafka(); err != nil {
		return nil, nil, err
	}
	bootstrap, err := kafkawriter.ParseBootstrap(g.kafkaBootstrap)
	if err != nil {
		return nil, nil, err
	}
	c, err := kafkawriter.Open(ctx, kafkawriter.Config{
		Bootstrap: bootstrap,
		ClientID:  g.clientID,
		Version:   g.kafkaVersion,
		Logger:    d.logger,

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
