package zkreader

import (
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestNearbyRoots: on the real ZooKeeper, the group folders one chroot level down and up are
// found with their group counts and the connect string that reads them; an empty consumers
// folder, one two levels down and the folder looked under are not.
func TestNearbyRoots(t *testing.T) {
	if testing.Short() {
		t.Skip("needs ZooKeeper")
	}
	e := newEnv(t)
	open := zk.WorldACL(zk.PermAll)
	e.create(t, "/consumers/up-1/offsets/t/0", "1", open)              // one level up from /mid
	e.create(t, "/mid/consumers/here/offsets/t/0", "1", open)          // looked under
	e.create(t, "/mid/kafka/consumers/a/offsets/t/0", "1", open)       // one level down
	e.create(t, "/mid/kafka/consumers/b/offsets/t/0", "1", open)       //
	e.create(t, "/mid/empty/consumers", "", open)                      // no group: no hint
	e.create(t, "/mid/deep/deeper/consumers/c/offsets/t/0", "1", open) // two levels down
	r := openT(t, Config{Servers: e.servers() + "/mid"})
	if got, want := r.GroupsRoot(), e.root+"/mid/consumers"; got != want {
		t.Errorf("GroupsRoot = %q, want %q", got, want)
	}
	got, err := r.NearbyRoots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []migrate.NearbyRoot{
		{Root: e.root + "/consumers", Connect: e.zk + e.root, Groups: 1},
		{Root: e.root + "/mid/kafka/consumers", Connect: e.zk + e.root + "/mid/kafka", Groups: 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("NearbyRoots =\n  %+v\nwant\n  %+v", got, want)
	}
}
