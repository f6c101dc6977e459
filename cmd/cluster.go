package cmd

import (
	"context"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// clusterIdentity names the stores of this run, for the plan file plan saves: Kafka's cluster
// id and the legacy source's ZooKeeper servers and chroot (copy's own is copier.Copy's).
func clusterIdentity(ctx context.Context, src *legacy.Source, kafka migrate.KafkaStore) (*migrate.ClusterIdentity, error) {
	return copier.CurrentCluster(ctx, kafka, src.Identity)
}
