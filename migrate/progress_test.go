package migrate_test

import (
	"context"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func TestWithReadProgressReportsEachGroup(t *testing.T) {
	l := migratetest.NewLegacyStore()
	l.SetOffset("a", "t", 0, 1)
	l.SetOffset("a", "t", 1, 1)
	l.SetOffset("b", "t", 0, 1)
	var got []migrate.ReadProgress
	r := migrate.WithReadProgress(l, func(p migrate.ReadProgress) { got = append(got, p) })
	var emitted int
	if err := r.ReadGroups(context.Background(), []string{"a", "b"}, func(migrate.LegacyGroup) error { emitted++; return nil }); err != nil {
		t.Fatal(err)
	}
	if emitted != 2 || len(got) != 3 {
		t.Fatalf("emitted %d groups, %d reports %+v; want 2 and 3", emitted, len(got), got)
	}
	if got[0] != (migrate.ReadProgress{GroupsTotal: 2}) || got[2] != (migrate.ReadProgress{Groups: 2, GroupsTotal: 2, Offsets: 3}) {
		t.Errorf("reports %+v: want {0 2 0} first and {2 2 3} last", got)
	}
	if migrate.WithReadProgress(l, nil) != migrate.LegacyStore(l) {
		t.Error("a nil report wraps the store")
	}
}

// A plan made through the reporting store is the plan made without it.
func TestPlannerWithReadProgress(t *testing.T) {
	l := migratetest.NewLegacyStore()
	k := migratetest.NewKafkaStore()
	k.AddTopic("t", migrate.PartitionRange{LogEnd: 10})
	for _, g := range []string{"a", "b", "c"} {
		l.SetOffset(g, "t", 0, 5)
	}
	var last migrate.ReadProgress
	pl := &migrate.Planner{Legacy: migrate.WithReadProgress(l, func(p migrate.ReadProgress) { last = p }), Kafka: k,
		Policy: migrate.DefaultPolicy(), ChunkGroups: 2}
	var groups int
	tail, err := pl.Stream(context.Background(), migratetest.Now, sinkCount(&groups))
	if err != nil {
		t.Fatal(err)
	}
	if groups != 3 || tail.Summary.Partitions != 3 || last != (migrate.ReadProgress{Groups: 3, GroupsTotal: 3, Offsets: 3}) {
		t.Errorf("groups %d, partitions %d, last progress %+v", groups, tail.Summary.Partitions, last)
	}
}

type countSink struct{ n *int }

func (s countSink) Head(migrate.Plan) error { return nil }
func (s countSink) Groups(gs []migrate.GroupPlan) error {
	*s.n += len(gs)
	return nil
}
func sinkCount(n *int) migrate.PlanSink { return countSink{n} }
