package copier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// chunkedStores has n groups g000.. with one zk-only partition each, topic t.
func chunkedStores(n int) (*migratetest.LegacyStore, *migratetest.KafkaStore, []string) {
	l := migratetest.NewLegacyStore()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("g%03d", i))
		l.SetOffset(names[i], "t", 0, int64(10+i))
	}
	k := migratetest.NewKafkaStore()
	k.AddTopic("t", migrate.PartitionRange{LogEnd: 1000})
	return l, k, names
}

// TestPlanSourceRefusesAChangedFile: a plan file changed after it was checked stops the
// stream of its groups with an error naming it.
func TestPlanSourceRefusesAChangedFile(t *testing.T) {
	l, k, _ := chunkedStores(3)
	p, err := migratetest.Build(mustInputs(t, l, k), migrate.DefaultPolicy(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := migratetest.WritePlanFile(planFile, p); err != nil {
		t.Fatal(err)
	}
	src, err := copier.OpenPlanSourceForTest(planFile)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := os.WriteFile(planFile, []byte("{}"), 0o644); err != nil { // same inode, new content
		t.Fatal(err)
	}
	var groups int
	var last error
	for gs, err := range src.Groups() {
		groups += len(gs)
		last = err
	}
	if last == nil || !strings.Contains(last.Error(), "changed while copy ran") || groups != 0 {
		t.Fatalf("read %d groups, last error %v; want none and the change named", groups, last)
	}
}

func mustInputs(t *testing.T, l *migratetest.LegacyStore, k *migratetest.KafkaStore) migrate.Inputs {
	t.Helper()
	in, err := migrate.ReadInputs(context.Background(), l, k, migrate.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestSpillFresh: a fresh plan with more writes than the limit goes to a temporary plan file
// that yields every group's writes once, with the whole plan's counts, and is removed on close.
func TestSpillFresh(t *testing.T) {
	for _, limit := range []int{0, 3, 100} {
		l, k, names := chunkedStores(10)
		l.SetLive("g004", "c1") // gated: counted, blocked, not kept
		pl := &migrate.Planner{Legacy: l, Kafka: k, Policy: migrate.DefaultPolicy(), ChunkGroups: 4}
		src, err := copier.SpillFreshForTest(context.Background(), pl, limit)
		if err != nil {
			t.Fatal(err)
		}
		if src.OnDisk() != (limit < 9) {
			t.Errorf("limit %d: on disk %v, want %v", limit, src.OnDisk(), limit < 9)
		}
		var got []string
		for gs, err := range src.Groups() {
			if err != nil {
				t.Fatalf("limit %d: %v", limit, err)
			}
			for _, g := range gs {
				got = append(got, g.Group)
			}
		}
		want := slices.DeleteFunc(names, func(g string) bool { return g == "g004" })
		s := src.Stats()
		if !slices.Equal(got, want) || s.WriteGroups != 9 || s.Summary.Groups != 10 || s.Summary.ByAction[migrate.ActionBlock] != 1 ||
			len(s.Blocked) != 1 || !strings.HasPrefix(s.Head.Fingerprint, "sha256:") {
			t.Errorf("limit %d: groups %v, stats %+v", limit, got, s)
		}
		dir := filepath.Dir(src.Path())
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); src.OnDisk() && !os.IsNotExist(err) {
			t.Errorf("limit %d: temporary directory %s left: %v", limit, dir, err)
		}
	}
}
