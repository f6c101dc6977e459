package migrate_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// orderInputs is three groups given out of order, with topics and partitions out of order
// (partition 10 after 2: numeric, not text order), and a Kafka commit ZooKeeper does not have.
func orderInputs() migrate.Inputs {
	r := migrate.PartitionRange{LogStart: 0, LogEnd: 1000}
	rs := slices.Repeat([]migrate.PartitionRange{r}, 11)
	return migrate.Inputs{
		Filter: migrate.FilterSpec{GroupRegex: "."},
		Legacy: []migrate.LegacyGroup{
			{Group: "b", Offsets: []migrate.LegacyOffset{off("b", "z", 0, 1), off("b", "a", 10, 1), off("b", "a", 2, 1), off("b", "a", 1, 1)}},
			{Group: "c", LiveConsumers: []string{"c-1"}, Offsets: []migrate.LegacyOffset{off("c", "a", 0, 7)}},
			{Group: "a", Offsets: []migrate.LegacyOffset{off("a", "a", 0, 5), off("a", "a", 1, 2000)}},
		},
		Topics: map[string]migrate.TopicInfo{"a": topic(rs...), "z": topic(r)},
		Groups: map[string]migrate.GroupState{
			"a": {State: "Empty", Committed: map[migrate.TopicPartition]int64{{Topic: "a", Partition: 0}: 5}},
			"b": {State: "Empty", Committed: map[migrate.TopicPartition]int64{{Topic: "a", Partition: 5}: 3}},
			"c": {},
		},
		Retention: 7 * 24 * time.Hour,
	}
}

func TestBuildOrderAndPlanFields(t *testing.T) {
	in := orderInputs()
	before := slices.Clone(in.Legacy[0].Offsets)
	pol := migrate.Policy{OnConflict: migrate.ConflictMax, OutOfRange: migrate.RangeFail, OffsetAdjust: 0}
	plan := migratetest.MustBuild(t, in, pol)
	if !slices.Equal(in.Legacy[0].Offsets, before) || in.Legacy[0].Group != "b" {
		t.Fatalf("Build reordered its inputs")
	}
	var got []string
	for _, g := range plan.Groups {
		for _, e := range g.Entries {
			got = append(got, migrate.Key{Group: g.Group, Topic: e.Topic, Partition: e.Partition}.String())
		}
	}
	want := []string{"a/a/0", "a/a/1", "b/a/1", "b/a/2", "b/a/10", "b/z/0", "c/a/0"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan order = %v, want %v (and no entry for b/a/5, which only Kafka has)", got, want)
	}
	if plan.SchemaVersion != migrate.PlanSchemaVersion || !plan.CreatedAt.Equal(migratetest.Now) || plan.Policy != pol ||
		time.Duration(plan.Retention) != in.Retention || !reflect.DeepEqual(plan.Filter, in.Filter) ||
		plan.Fingerprint != migrate.Fingerprint(in) {
		t.Fatalf("plan header = %+v", plan)
	}
}

func TestPlanSummarySafeWrites(t *testing.T) {
	plan := migratetest.MustBuild(t, orderInputs(), migrate.DefaultPolicy())
	s := plan.Summary()
	want := migrate.Summary{Groups: 3, GatedGroups: 1, Partitions: 7,
		ByClass:  map[migrate.Class]int{migrate.ClassEqual: 1, migrate.ClassAboveLogEnd: 1, migrate.ClassZKOnly: 5},
		ByAction: map[migrate.Action]int{migrate.ActionWrite: 4, migrate.ActionSkip: 1, migrate.ActionBlock: 2}}
	for _, c := range migrate.Classes() {
		want.ByClass[c] += 0
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Summary = %+v\nwant %+v", s, want)
	}
	if plan.Safe() {
		t.Errorf("Safe() = true with blocked entries")
	}
	w := plan.Writes()
	if len(w) != 1 || w[0].Group != "b" || len(w[0].Entries) != 4 {
		t.Fatalf("Writes = %+v, want the four partitions of b", w)
	}
	commits := w[0].Commits(func(e migrate.Entry) string { return "from " + e.Znode })
	wantCommit := migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: "a", Partition: 1}, Offset: 1,
		Metadata: "from " + znode("b", "a", 1)}
	if len(commits) != 4 || commits[0] != wantCommit || commits[3].Topic != "z" {
		t.Fatalf("Commits = %+v", commits)
	}
	if c := w[0].Commits(nil); c[0].Metadata != "" {
		t.Errorf("nil metadata func gave %q", c[0].Metadata)
	}
}

func TestPlanSafeWithoutBlocks(t *testing.T) {
	in := orderInputs()
	in.Legacy = in.Legacy[:1] // only b: all zk-only writes
	plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
	if !plan.Safe() {
		t.Fatalf("Safe() = false for a plan with only writes")
	}
	empty := migratetest.MustBuild(t, migrate.Inputs{}, migrate.DefaultPolicy())
	if !empty.Safe() || empty.Summary().Partitions != 0 || len(empty.Writes()) != 0 {
		t.Fatalf("empty plan: safe %v, summary %+v", empty.Safe(), empty.Summary())
	}
}
