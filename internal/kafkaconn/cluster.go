package kafkaconn

import (
	"context"
	"fmt"

	"github.com/IBM/sarama"
)

// ClusterVersion checks version, which Negotiate settled from one bootstrap broker, against
// every broker of the cluster (addrs, from the cluster's metadata), and returns the level to
// use: the oldest broker's, when a broker is older than version. A cluster mid-way through a
// rolling upgrade has brokers of two releases, and a request built for the newer one reaches
// the older one cut down to what it has: a Metadata request naming topics, cut below v4 (Kafka
// 0.11), loses allow_auto_topic_creation, and a broker with auto.create.topics.enable would
// re-create a deleted topic. An explicit version (--kafka-version) is checked against each
// broker as against the first. A broker that cannot be asked (down in a rolling restart) is
// warned about, not waited for: its release cannot be told.
func ClusterVersion(ctx context.Context, cfg Config, version sarama.KafkaVersion, addrs []string) (sarama.KafkaVersion, error) {
	cfg = cfg.WithDefaults()
	use := version
	for _, addr := range addrs {
		apis, err := probeOne(ctx, cfg, addr)
		if err != nil {
			if ctx.Err() != nil {
				return sarama.KafkaVersion{}, ctx.Err()
			}
			cfg.Logger.Warn("kafka broker not asked for its release: requests to it are built for the others' level",
				"broker", addr, "level", use, "err", err)
			continue
		}
		detected, err := versionFromAPIs(apis)
		if err != nil {
			return sarama.KafkaVersion{}, fmt.Errorf("kafka broker %s: %w", addr, err)
		}
		if cfg.Version != VersionAuto {
			if err := checkExplicit(version, detected); err != nil {
				return sarama.KafkaVersion{}, fmt.Errorf("kafka broker %s: %w", addr, err)
			}
			continue
		}
		if !detected.IsAtLeast(use) {
			cfg.Logger.Warn("kafka brokers of different releases: every request is built for the oldest",
				"broker", addr, "release", detected, "others", use)
			use = detected
		}
	}
	return use, nil
}
