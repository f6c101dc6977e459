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
	cases := []struct {
		name string
		cur  migrate.ClusterIdentity
		want string // "" means the same cluster
	}{
		{name: "same", cur: a},
		{name: "one server shared", cur: migrate.ClusterIdentity{KafkaClusterID: "A", ZooKeeper: []string{"zk2:2181", "zk3:2181"}, Chroot: "/kafka"}},
		{name: "kafka id unknown now", cur: migrate.ClusterIdentity{ZooKeeper: a.ZooKeeper, Chroot: "/kafka"}},
		{name: "zookeeper unknown now", cur: migrate.ClusterIdentity{KafkaClusterID: "A"}},
		{name: "other kafka", cur: migrate.ClusterIdentity{KafkaClusterID: "B", ZooKeeper: a.ZooKeeper, Chroot: "/kafka"}, want: "kafka cluster id differ"},
		{name: "no chroot", cur: migrate.ClusterIdentity{KafkaClusterID: "A", ZooKeeper: a.ZooKeeper}, want: "zookeeper chroot differ"},
		{name: "all differ", cur: migrate.ClusterIdentity{KafkaClusterID: "B", ZooKeeper: []string{"zk9:2181"}},
			want: "kafka cluster id, zookeeper chroot, zookeeper servers differ"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := migrate.CheckCluster(a, tc.cur)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckCluster = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, migrate.ErrOtherCluster) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckCluster = %v, want ErrOtherCluster saying %q", err, tc.want)
			}
		})
	}
}
