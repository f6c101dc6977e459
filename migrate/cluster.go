package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrOtherCluster means a saved plan was made on another cluster than the one copy is connected
// to. Its fingerprint cannot tell: two clusters holding equal offsets plan alike, and copy would
// then write one cluster's plan into the other.
var ErrOtherCluster = errors.New("the plan was made on another cluster")

// ClusterIdentity names the stores a plan was made from. A plan file carries it (schema 1, an
// optional field: a plan file written before it has none, and its cluster cannot be checked).
type ClusterIdentity struct {
	// KafkaClusterID is the cluster id Kafka's Metadata answer gives ("" when the brokers are
	// older than 0.10.1 and give none).
	KafkaClusterID string `json:"kafka_cluster_id,omitempty"`
	// ZooKeeper is the ZooKeeper servers as host:port, sorted; Chroot the chroot ("" for none).
	ZooKeeper []string `json:"zookeeper_servers,omitempty"`
	Chroot    string   `json:"zookeeper_chroot,omitempty"`
	// Replication is set when Kafka is a cluster MirrorMaker 2 replicates the znodes' cluster
	// into (a Translator): a plan translated one way must not run as translated another.
	Replication *Replication `json:"mirrormaker2,omitempty"`
}

// Replication names the MirrorMaker 2 replication the znodes' offsets are translated through.
type Replication struct {
	SourceAlias  string `json:"source_alias,omitempty"`
	TargetAlias  string `json:"target_alias"`
	Policy       string `json:"replication_policy"`
	Separator    string `json:"replication_policy_separator,omitempty"`
	SyncsOn      string `json:"offset_syncs_location"`
	OffsetLagMax int64  `json:"offset_lag_max"`
}

func (r *Replication) String() string {
	if r == nil {
		return "no MirrorMaker 2 translation"
	}
	return fmt.Sprintf("MirrorMaker 2 %s -> %s (policy %s, offset syncs on the %s, offset.lag.max %d)",
		r.SourceAlias, r.TargetAlias, r.Policy, r.SyncsOn, r.OffsetLagMax)
}

// String names the cluster for messages.
func (c ClusterIdentity) String() string {
	kafka := c.KafkaClusterID
	if kafka == "" {
		kafka = "(unknown)"
	}
	zk := strings.Join(c.ZooKeeper, ",")
	if zk == "" {
		zk = "(unknown)"
	}
	if c.Replication != nil {
		return fmt.Sprintf("kafka cluster id %s, zookeeper %s%s, %s", kafka, zk, c.Chroot, c.Replication)
	}
	return fmt.Sprintf("kafka cluster id %s, zookeeper %s%s", kafka, zk, c.Chroot)
}

// CheckCluster reports whether a plan made on saved may run on current: an ErrOtherCluster error
// naming both when the Kafka cluster ids differ, the ZooKeeper chroots differ, or the two lists
// of ZooKeeper servers share no server while the Kafka ids do not vouch for the same cluster.
// Only what both know is compared: an id or a server list that one side lacks is not a
// difference. Without Kafka ids, the same ensemble reached under other names is refused too:
// --force is for that.
func CheckCluster(saved, current ClusterIdentity) error {
	var diffs []string
	if saved.KafkaClusterID != "" && current.KafkaClusterID != "" && saved.KafkaClusterID != current.KafkaClusterID {
		diffs = append(diffs, "kafka cluster id")
	}
	if len(saved.ZooKeeper) > 0 && len(current.ZooKeeper) > 0 {
		if saved.Chroot != current.Chroot {
			diffs = append(diffs, "zookeeper chroot")
		}
		// Server names tell clusters apart only when Kafka's id cannot: the same ensemble is
		// often reached under other names (an alias, an address, another set of its servers).
		sameKafka := saved.KafkaClusterID != "" && saved.KafkaClusterID == current.KafkaClusterID
		if !sameKafka && !slices.ContainsFunc(saved.ZooKeeper, func(s string) bool { return slices.Contains(current.ZooKeeper, s) }) {
			diffs = append(diffs, "zookeeper servers")
		}
	}
	if (saved.Replication == nil) != (current.Replication == nil) || (saved.Replication != nil && *saved.Replication != *current.Replication) {
		diffs = append(diffs, "MirrorMaker 2 translation")
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w (%s differ): plan made on %s; connected to %s", ErrOtherCluster, strings.Join(diffs, ", "), saved, current)
}
