package zkreader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestLiveness(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	tps := []migrate.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 3}}
	if err := r.WriteOffsets(ctx, "g", map[migrate.TopicPartition]int64{tps[0]: 1}); err != nil {
		t.Fatal(err)
	}
	cleanup, err := r.RegisterLiveConsumer(ctx, "g", "g_host-1700000000000-abcd1234", tps)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r, []string{"g"})["g"]
	want := []string{"ids/g_host-1700000000000-abcd1234",
		"owners/t/0=g_host-1700000000000-abcd1234-0", "owners/t/1=g_host-1700000000000-abcd1234-0",
		"owners/u/3=g_host-1700000000000-abcd1234-0"}
	if !slices.Equal(got.LiveConsumers, want) {
		t.Errorf("live consumers\n%q\nwant\n%q", got.LiveConsumers, want)
	}

	// The registration is the Scala consumer's: ephemeral, JSON with the subscription.
	data, stat, err := e.admin.conns[0].Get(e.root + "/consumers/g/ids/g_host-1700000000000-abcd1234")
	if err != nil {
		t.Fatal(err)
	}
	var reg consumerRegistration
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatalf("registration %q: %v", data, err)
	}
	if stat.EphemeralOwner == 0 || reg.Version != 1 || reg.Pattern != "static" || reg.Timestamp == "" ||
		len(reg.Subscription) != 2 || reg.Subscription["t"] != 1 || reg.Subscription["u"] != 1 {
		t.Errorf("registration %s (ephemeral owner %d)", data, stat.EphemeralOwner)
	}

	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, []string{"g"})["g"]; len(got.LiveConsumers) != 0 || len(got.Offsets) != 1 {
		t.Errorf("after cleanup: %+v, want the offset and no live consumer", got)
	}
}

func TestManyGroups(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const groups, partitions = 200, 10
	w := openT(t, Config{Servers: e.servers()})
	var wg sync.WaitGroup
	errs := make(chan error, groups)
	var names []string
	for g := range groups {
		name := fmt.Sprintf("group-%03d", g)
		names = append(names, name)
		offsets := map[migrate.TopicPartition]int64{}
		for p := range partitions {
			offsets[migrate.TopicPartition{Topic: fmt.Sprintf("topic-%d", p%2), Partition: int32(p)}] = int64(g*1000 + p)
		}
		wg.Go(func() { errs <- w.WriteOffsets(ctx, name, offsets) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	// Small bounds, so the test exercises waiting on them.
	r := openT(t, Config{Servers: e.servers(), Connections: 3, InFlight: 7, GroupsInFlight: 5})
	listed, err := r.ListGroups(ctx)
	if err != nil || !slices.Equal(listed, names) {
		t.Fatalf("ListGroups = %d groups, %v; want %d", len(listed), err, groups)
	}
	var inEmit atomic.Int32
	got := map[string]migrate.LegacyGroup{}
	err = r.ReadGroups(ctx, append(listed, listed[0]), func(g migrate.LegacyGroup) error {
		if inEmit.Add(1) != 1 {
			t.Error("emit called concurrently")
		}
		defer inEmit.Add(-1)
		if _, dup := got[g.Group]; dup {
			t.Errorf("group %q emitted twice", g.Group)
		}
		got[g.Group] = g
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != groups {
		t.Fatalf("emitted %d groups, want %d", len(got), groups)
	}
	for gi, name := range names {
		offs := got[name].Offsets
		if len(offs) != partitions {
			t.Errorf("group %s: %d offsets, want %d", name, len(offs), partitions)
			continue
		}
		for _, o := range offs {
			if o.Invalid != "" || o.Offset != int64(gi*1000)+int64(o.Partition) || o.Topic != fmt.Sprintf("topic-%d", o.Partition%2) {
				t.Errorf("group %s: %+v", name, o)
			}
		}
	}
}

func TestReadGroupsStops(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	w := openT(t, Config{Servers: e.servers()})
	var names []string
	for g := range 40 {
		names = append(names, fmt.Sprintf("g%02d", g))
		if err := w.WriteOffsets(ctx, names[g], map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 1}); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop here")
	tests := []struct {
		name string
		emit func(r *Reader, cancel context.CancelFunc) error
		want error
	}{
		{"emit error", func(*Reader, context.CancelFunc) error { return stop }, stop},
		{"cancelled", func(_ *Reader, cancel context.CancelFunc) error { cancel(); return nil }, context.Canceled},
		// Closing the pool mid-read stands for a lost connection: the run fails as a whole.
		{"connection lost", func(r *Reader, _ context.CancelFunc) error { r.Close(); return nil }, zk.ErrConnectionClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := openT(t, Config{Servers: e.servers(), GroupsInFlight: 2})
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			emitted := 0
			err := r.ReadGroups(ctx, names, func(migrate.LegacyGroup) error {
				emitted++
				return tt.emit(r, cancel)
			})
			if !errors.Is(err, tt.want) && !(tt.want == zk.ErrConnectionClosed && errors.Is(err, zk.ErrClosing)) {
				t.Errorf("ReadGroups error = %v, want %v", err, tt.want)
			}
			if emitted >= len(names) {
				t.Errorf("emitted all %d groups despite the stop", emitted)
			}
		})
	}
	if err := w.ReadGroups(ctx, []string{"a/b"}, func(migrate.LegacyGroup) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("ReadGroups of a group name with '/': %v", err)
	}
}

// TestOpenUnreachable needs no stack: a closed port, and a port that accepts TCP and hangs up.
func TestOpenUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tests := []struct{ servers, want string }{
		{closedAddr, "zookeeper " + closedAddr + ": every server refused the connection (is ZooKeeper running there?): dial tcp " + closedAddr},
		{mute.Addr().String() + "/chroot", "zookeeper " + mute.Addr().String() + "/chroot: not reachable within 1s: authentication failed"},
	}
	for _, tt := range tests {
		t.Run(tt.servers, func(t *testing.T) {
			r, err := Open(context.Background(), Config{Servers: tt.servers, SessionTimeout: time.Second, Auth: "digest:u:secret-pw"})
			if err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "secret-pw") {
				t.Errorf("Open error = %q, want it to start with %q (and no password)", err, tt.want)
			}
		})
	}
}
