package cmd

import (
	"context"
	"fmt"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// clusterIDer is the Kafka adapter's cluster id (kafkawriter.Client; the fakes).
type clusterIDer interface {
	ClusterID(ctx context.Context) (string, error)
}

// clusterIdentity names the stores of this run, for a plan file and for checking one: Kafka's
// cluster id and the legacy source's ZooKeeper servers and chroot. What cannot be known is left empty.
func clusterIdentity(ctx context.Context, src *legacy.Source, kafka kafkaStore) (*migrate.ClusterIdentity, error) {
	id := &migrate.ClusterIdentity{ZooKeeper: src.Identity.ZooKeeper, Chroot: src.Identity.Chroot}
	if k, ok := kafka.(clusterIDer); ok {
		var err error
		if id.KafkaClusterID, err = k.ClusterID(ctx); err != nil {
			return nil, err
		}
	}
	return id, nil
}

// checkPlanCluster refuses a saved plan made on another cluster than current, unless --force
// (then it warns). A plan written before plans recorded their cluster is run with a warning.
func checkPlanCluster(d *deps, o *copyOptions, saved *migrate.ClusterIdentity, savedSchema int, current *migrate.ClusterIdentity) error {
	switch {
	case saved == nil && savedSchema < 2:
		d.logger.Warn("the plan file records no cluster (written by an earlier zk2kafka): whether it was made on this cluster is not checked",
			"file", o.planFile, "connected_to", current.String())
		return nil
	case saved == nil && !o.force:
		// Every plan of schema 2 records its cluster: one without was edited.
		return fmt.Errorf("plan file %s: %w: schema_version %d always records the cluster it was made on, and this one records none "+
			"(edited?); nothing was written (--force runs it all the same; or make the plan again)", o.planFile, migrate.ErrOtherCluster, savedSchema)
	case saved == nil:
		d.logger.Warn("running a plan file that records no cluster (--force)", "file", o.planFile, "connected_to", current.String())
		return nil
	}
	err := migrate.CheckCluster(*saved, *current)
	switch {
	case err == nil:
		return nil
	case o.force:
		d.logger.Warn("running a plan made on another cluster (--force)", "file", o.planFile, "err", err)
		return nil
	}
	return fmt.Errorf("plan file %s: %w; nothing was written (--force runs it all the same)", o.planFile, err)
}
