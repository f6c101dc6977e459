package migrate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestCheckCluster: only what both identities know is compared; one shared ZooKeeper server
// is the same ensemble; a difference names what differs.
func TestCheckCluster(t *testing.T) {
	a := migrate.ClusterIdentity{KafkaClusterID: "A", ZooKeeper: []string{"zk1:2181", "zk2:2181"}, Chroot: "/kafka"}
	mm2a := migrate.Replication{SourceAlias: "old", TargetAlias: "new", Policy: "default", Separator: ".", SyncsOn: "source", OffsetLagMax: 100}
	cases := []struct {
		name  string
		saved *migrate.Replication // the saved plan's translation, on a's cluster
		cur   migrate.ClusterIdentity
		want  string // "" means the same cluster
	}{
		{name: "same", cur: a},
		{name: "one server shared", cur: migrate.ClusterIdentity{KafkaClusterID: "A", ZooKeeper: []string{"zk2:2181", "zk3:2181"}, Chroot: "/kafka"}},
		{name: "kafka id unknown now", cur: migrate.ClusterIdentity{ZooKeeper: a.ZooKeeper, Chroot: "/kafka"}},
		{name: "zookeeper unknown now", cur: migrate.ClusterIdentity{KafkaClusterID: "A"}},
		{name: "other kafka", cur: migrate.ClusterIdentity{KafkaClusterID: "B", ZooKeeper: a.ZooKeeper, Chroot: "/kafka"}, want: "kafka cluster id differ"},
		{name: "no chroot", cur: migrate.ClusterIdentity{KafkaClusterID: "A", ZooKeeper: a.ZooKeeper}, want: "zookeeper chroot differ"},
		{name: "all differ", cur: migrate.ClusterIdentity{KafkaClusterID: "B", ZooKeeper: []string{"zk9:2181"}},
			want: "kafka cluster id, zookeeper chroot, zookeeper servers differ"},
		{name: "translated now, not then", cur: withReplication(a, mm2a), want: "MirrorMaker 2 translation differ"},
		{name: "translated then, not now", saved: &mm2a, cur: a, want: "MirrorMaker 2 translation differ"},
		{name: "translated alike", saved: &mm2a, cur: withReplication(a, mm2a)},
		{name: "another target alias", saved: &mm2a, cur: withReplication(a, migrate.Replication{SourceAlias: "old", TargetAlias: "other",
			Policy: "default", Separator: ".", SyncsOn: "source", OffsetLagMax: 100}), want: "MirrorMaker 2 translation differ"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := a
			if tc.saved != nil {
				saved = withReplication(a, *tc.saved)
			}
			err := migrate.CheckCluster(saved, tc.cur)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckCluster = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, migrate.ErrOtherCluster) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckCluster = %v, want ErrOtherCluster saying %q", err, tc.want)
			}
		})
	}
}

func withReplication(c migrate.ClusterIdentity, r migrate.Replication) migrate.ClusterIdentity {
	c.Replication = &r
	return c
}
