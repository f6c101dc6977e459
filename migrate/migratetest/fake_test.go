package migratetest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func tp(t string, p int32) migrate.TopicPartition {
	return migrate.TopicPartition{Topic: t, Partition: p}
}

func commit(t string, p int32, off int64) migrate.Commit {
	return migrate.Commit{TopicPartition: tp(t, p), Offset: off}
}

func TestKafkaStoreCommit(t *testing.T) {
	ctx := t.Context()
	k := migratetest.NewKafkaStore()
	k.AddTopic("t", migrate.PartitionRange{LogEnd: 10}, migrate.PartitionRange{LogEnd: 10}, migrate.PartitionRange{LogEnd: 10})
	boom := errors.New("partition boom")
	k.FailPartition(migrate.Key{Group: "g", Topic: "t", Partition: 2}, boom)
	res, err := k.Commit(ctx, "g", []migrate.Commit{commit("t", 0, 5), commit("t", 2, 6), commit("t", 7, 1), commit("u", 0, 1), commit("t", 1, -1)})
	if err != nil {
		t.Fatal(err)
	}
	anyErr := errors.New("any error")
	wantErr := []error{nil, boom, migratetest.ErrUnknownTopicOrPartition, migratetest.ErrUnknownTopicOrPartition, anyErr}
	if len(res) != len(wantErr) {
		t.Fatalf("got %d results, want %d", len(res), len(wantErr))
	}
	for i, r := range res {
		switch want := wantErr[i]; {
		case want == nil && r.Err != nil, want != nil && r.Err == nil,
			want != nil && want != anyErr && !errors.Is(r.Err, want):
			t.Errorf("partition %v: error %v, want %v", r.TopicPartition, r.Err, want)
		}
	}
	if got := k.Commits(); len(got) != 1 || got[0].Group != "g" || got[0].Commit != commit("t", 0, 5) {
		t.Fatalf("Commits = %+v, want only t/0", got)
	}
	gs, err := k.Groups(ctx, []string{"g", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if g := gs["g"]; g.State != "Empty" || len(g.Committed) != 1 || g.Committed[tp("t", 0)] != 5 {
		t.Fatalf("group after commit = %+v", g)
	}
	if n, ok := gs["none"]; !ok || n.State != "" {
		t.Fatalf("unknown group = %+v, %v; want present with State \"\"", n, ok)
	}
	gs["g"].Committed[tp("t", 0)] = 99 // a caller's change must not reach the store
	if again, _ := k.Groups(ctx, []string{"g"}); again["g"].Committed[tp("t", 0)] != 5 {
		t.Fatalf("Groups returned the store's own map")
	}
	k.FailCommits(errors.New("coordinator gone"))
	if _, err := k.Commit(ctx, "g", []migrate.Commit{commit("t", 0, 6)}); err == nil {
		t.Fatalf("FailCommits: no error")
	}
}

func TestKafkaStoreRefusesActiveGroup(t *testing.T) {
	for _, st := range []struct {
		state   string
		members int
		refused bool
	}{{"", 0, false}, {"Empty", 0, false}, {"Dead", 0, false}, {"Stable", 1, true}, {"PreparingRebalance", 0, true}, {"Empty", 1, true}} {
		k := migratetest.NewKafkaStore()
		k.AddTopic("t", migrate.PartitionRange{LogEnd: 10})
		k.SetGroup("g", st.state, st.members)
		res, err := k.Commit(t.Context(), "g", []migrate.Commit{commit("t", 0, 5)})
		if err != nil {
			t.Fatal(err)
		}
		if refused := errors.Is(res[0].Err, migrate.ErrGroupActive); refused != st.refused || (!refused && res[0].Err != nil) {
			t.Errorf("state %q/%d: error %v, want refused=%v", st.state, st.members, res[0].Err, st.refused)
		}
		if st.refused && len(k.Commits()) != 0 {
			t.Errorf("state %q: refused commit recorded", st.state)
		}
	}
}

func TestLegacyStore(t *testing.T) {
	s := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "b"})
	s.SetOffset("a", "t", 0, 5)
	s.SetOffset("a", "t", 0, 6) // replaces
	s.SetOffset("c", "t", 1, 1)
	names, err := s.ListGroups(t.Context())
	if err != nil || !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("ListGroups = %v, %v", names, err)
	}
	var got []string
	err = s.ReadGroups(t.Context(), []string{"a", "c"}, func(g migrate.LegacyGroup) error {
		got = append(got, g.Group)
		if g.Group == "a" && (len(g.Offsets) != 1 || g.Offsets[0].Offset != 6 || g.Offsets[0].Path != "/consumers/a/offsets/t/0") {
			t.Errorf("group a = %+v", g)
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []string{"c", "a"}) {
		t.Fatalf("ReadGroups emitted %v, %v; want c then a", got, err)
	}
	// A group deleted since it was listed reads as ZooKeeper's reader reads it: empty.
	var zz []migrate.LegacyGroup
	if err := s.ReadGroups(t.Context(), []string{"zz"}, func(g migrate.LegacyGroup) error { zz = append(zz, g); return nil }); err != nil ||
		len(zz) != 1 || zz[0].Group != "zz" || len(zz[0].Offsets) != 0 {
		t.Fatalf("unknown group: %+v, %v; want it emitted empty", zz, err)
	}
	stop := errors.New("stop")
	if err := s.ReadGroups(t.Context(), []string{"a"}, func(migrate.LegacyGroup) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("emit error not returned: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.ListGroups(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ListGroups: %v", err)
	}
}
