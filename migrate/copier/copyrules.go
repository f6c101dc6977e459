package copier

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The refusals of Copy that come before any read of the offsets: they are here, in the core,
// so that a library caller cannot skip a rule the CLI applies.

// CurrentCluster names the stores a run is connected to, for a plan file and for checking one:
// legacy is what the legacy source knows of its ZooKeeper (servers, chroot; its KafkaClusterID
// is ignored), and Kafka's cluster id is asked of kafka. What cannot be known is left empty.
func CurrentCluster(ctx context.Context, kafka migrate.KafkaCluster, legacy migrate.ClusterIdentity) (*migrate.ClusterIdentity, error) {
	id, err := kafka.ClusterID(ctx)
	if err != nil {
		return nil, err // the adapter's error names the cluster id read
	}
	return &migrate.ClusterIdentity{KafkaClusterID: id, ZooKeeper: legacy.ZooKeeper, Chroot: legacy.Chroot, Replication: legacy.Replication}, nil
}

// checkPlanCluster refuses the saved plan at path, made on saved (nil: none recorded) and
// written with schema_version savedSchema, when current is another cluster, unless force
// (then it warns). A plan written before plans recorded their cluster (schema 1) is run with a
// warning; one of schema 2 without a cluster was edited, and is refused unless force.
func checkPlanCluster(log *slog.Logger, path string, saved *migrate.ClusterIdentity, savedSchema int, current migrate.ClusterIdentity, force bool) error {
	switch {
	case saved == nil && savedSchema < 2:
		log.Warn("the plan file records no cluster (written by an earlier zk2kafka): whether it was made on this cluster is not checked",
			"file", path, "connected_to", current.String())
		return nil
	case saved == nil && !force:
		return fmt.Errorf("plan file %s: %w: schema_version %d always records the cluster it was made on, and this one records none "+
			"(edited?); nothing was written (--force runs it all the same; or make the plan again)", path, migrate.ErrOtherCluster, savedSchema)
	case saved == nil:
		log.Warn("running a plan file that records no cluster (--force)", "file", path, "connected_to", current.String())
		return nil
	}
	err := migrate.CheckCluster(*saved, current)
	switch {
	case err == nil:
		return nil
	case force:
		log.Warn("running a plan made on another cluster (--force)", "file", path, "err", err)
		return nil
	}
	return fmt.Errorf("plan file %s: %w; nothing was written (--force runs it all the same)", path, err)
}
