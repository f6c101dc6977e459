package zkreader

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestRecheckGroups checks the re-check by known paths against a full ReadGroups of the same
// tree: same liveness, same value of every requested znode (valid, malformed), nothing for a
// deleted one, then a fresh value after a change; and it refuses a path outside the group.
func TestRecheckGroups(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	tps := []migrate.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 2}}
	for _, g := range []string{"live", "idle"} {
		if err := r.WriteOffsets(ctx, g, map[migrate.TopicPartition]int64{tps[0]: 10, tps[1]: 11, tps[2]: 12}); err != nil {
			t.Fatal(err)
		}
	}
	e.create(t, "/consumers/idle/offsets/u/3", "-1", zk.WorldACL(zk.PermAll))
	cleanup, err := r.RegisterLiveConsumer(ctx, "live", "live_host-1-abcd", tps[:2])
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cleanup(); err != nil {
			t.Error(err)
		}
	}()

	full := readAll(t, r, []string{"live", "idle"})
	var reqs []migrate.RecheckRequest
	for _, g := range []string{"live", "idle"} {
		req := migrate.RecheckRequest{Group: g}
		for _, o := range full[g].Offsets {
			req.Offsets = append(req.Offsets, migrate.LegacyOffset{Topic: o.Topic, Partition: o.Partition, Path: o.Path})
		}
		reqs = append(reqs, req)
	}
	got, err := r.RecheckGroups(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Group != "live" || got[1].Group != "idle" {
		t.Fatalf("recheck returned %d groups: %+v", len(got), got)
	}
	for _, g := range got {
		if !slices.Equal(g.LiveConsumers, full[g.Group].LiveConsumers) {
			t.Errorf("group %s: live %q, full read %q", g.Group, g.LiveConsumers, full[g.Group].LiveConsumers)
		}
		if fmt.Sprint(g.Offsets) != fmt.Sprint(full[g.Group].Offsets) {
			t.Errorf("group %s: offsets\n%v\nfull read\n%v", g.Group, g.Offsets, full[g.Group].Offsets)
		}
	}
	if len(got[0].LiveConsumers) != 3 || len(got[1].LiveConsumers) != 0 || len(got[1].Offsets) != 4 || got[1].Offsets[3].Invalid == "" {
		t.Errorf("fixture not as seeded: live %+v, idle %+v", got[0], got[1])
	}

	// A change and a deletion since: the re-check sees both.
	if err := r.WriteOffsets(ctx, "idle", map[migrate.TopicPartition]int64{tps[0]: 99}); err != nil {
		t.Fatal(err)
	}
	if err := r.deleteTree(ctx, r.path("/consumers/idle/offsets/t/1")); err != nil {
		t.Fatal(err)
	}
	got, err = r.RecheckGroups(ctx, reqs[1:])
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, o := range got[0].Offsets {
		vals = append(vals, fmt.Sprintf("%s/%d=%d%s", o.Topic, o.Partition, o.Offset, o.Invalid))
	}
	if want := []string{"t/0=99", "u/2=12", "u/3=0" + got[0].Offsets[len(got[0].Offsets)-1].Invalid}; !slices.Equal(vals, want) {
		t.Errorf("after change: %q, want %q", vals, want)
	}

	bad := []migrate.RecheckRequest{{Group: "idle", Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Path: r.path("/consumers/live/offsets/t/0")}}}}
	if _, err := r.RecheckGroups(ctx, bad); err == nil {
		t.Error("a znode of another group was accepted")
	}
}
