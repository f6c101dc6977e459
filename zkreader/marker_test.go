package zkreader

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestMarker writes, reads and rewrites a cutover marker, and checks that the marker changes
// nothing a reader sees: the group list, its offsets and its liveness are the same with it.
func TestMarker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	if err := r.WriteOffsets(ctx, "g", map[migrate.TopicPartition]int64{tp: 42}); err != nil {
		t.Fatal(err)
	}
	before := readAll(t, r, []string{"g"})["g"]
	groupsBefore, err := r.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if _, found, err := r.Marker(ctx, "g"); err != nil || found {
		t.Fatalf("marker before marking: found %t, err %v", found, err)
	}
	for _, data := range []string{`{"offsets":1}`, `{"offsets":2}`} {
		if err := r.MarkMigrated(ctx, "g", []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, found, err := r.Marker(ctx, "g")
		if err != nil || !found || string(got) != data {
			t.Fatalf("marker: %q found %t err %v, want %q", got, found, err, data)
		}
	}
	// Persistent, beside offsets/, with the open ACL.
	p := e.root + "/consumers/g/" + MarkerName
	_, stat, err := e.admin.conns[0].Get(p)
	if err != nil {
		t.Fatal(err)
	}
	acl, _, err := e.admin.conns[0].GetACL(p)
	if err != nil {
		t.Fatal(err)
	}
	if stat.EphemeralOwner != 0 || !reflect.DeepEqual(acl, zk.WorldACL(zk.PermAll)) {
		t.Errorf("marker %s: ephemeral owner %d, acl %+v", p, stat.EphemeralOwner, acl)
	}

	after := readAll(t, r, []string{"g"})["g"]
	if !reflect.DeepEqual(before, after) {
		t.Errorf("ReadGroups changed by the marker:\n%+v\nwant\n%+v", after, before)
	}
	groupsAfter, err := r.ListGroups(ctx)
	if err != nil || !slices.Equal(groupsBefore, groupsAfter) {
		t.Errorf("ListGroups %v (err %v), want %v", groupsAfter, err, groupsBefore)
	}
}

func TestMarkerRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "/consumers", "", zk.WorldACL(zk.PermAll))
	r := openT(t, Config{Servers: e.servers()})
	cases := []struct {
		name, group string
		data        []byte
		want        string
	}{
		{name: "no such group", group: "absent", data: []byte("{}"), want: "does not exist"},
		{name: "bad group name", group: "a/b", data: []byte("{}"), want: "contains '/'"},
		{name: "too large", group: "absent", data: make([]byte, maxMarkerBytes+1), want: "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := r.MarkMigrated(ctx, tc.group, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// A refused marker never created the group.
	if groups, err := r.ListGroups(ctx); err != nil || len(groups) != 0 {
		t.Errorf("groups after refusals: %v (err %v), want none", groups, err)
	}
}
