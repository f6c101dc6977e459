package migrate_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// badLegacy breaks the LegacyStore contract in one way.
type badLegacy struct {
	groups []string
	emit   []migrate.LegacyGroup
}

func (b badLegacy) ListGroups(context.Context) ([]string, error) { return b.groups, nil }

func (b badLegacy) ReadGroups(_ context.Context, _ []string, emit func(migrate.LegacyGroup) error) error {
	for _, g := range b.emit {
		if err := emit(g); err != nil {
			return err
		}
	}
	return nil
}

// badKafka answers for some topics or groups only.
type badKafka struct {
	*migratetest.KafkaStore
	dropTopic, dropGroup string
}

func (b badKafka) Topics(ctx context.Context, ts []string) (map[string]migrate.TopicInfo, error) {
	m, err := b.KafkaStore.Topics(ctx, ts)
	delete(m, b.dropTopic)
	return m, err
}

func (b badKafka) Groups(ctx context.Context, gs []string) (map[string]migrate.GroupState, error) {
	m, err := b.KafkaStore.Groups(ctx, gs)
	delete(m, b.dropGroup)
	return m, err
}

// TestReadInputsRejectsIncompleteReads: a partial read must not become a plan.
func TestReadInputsRejectsIncompleteReads(t *testing.T) {
	g := func(name string) migrate.LegacyGroup {
		return migrate.LegacyGroup{Group: name, Offsets: []migrate.LegacyOffset{off(name, "t", 0, 1)}}
	}
	kafka := migratetest.NewKafkaStore()
	kafka.AddTopic("t", migrate.PartitionRange{LogStart: 0, LogEnd: 5})
	tests := []struct {
		name   string
		legacy migrate.LegacyStore
		kafka  migrate.KafkaState
		want   string
	}{
		{"group emitted twice", badLegacy{[]string{"a"}, []migrate.LegacyGroup{g("a"), g("a")}}, kafka, `group "a" twice`},
		{"group not asked for", badLegacy{[]string{"a"}, []migrate.LegacyGroup{g("a"), g("b")}}, kafka, `"b", which was not asked`},
		{"group never emitted", badLegacy{[]string{"a", "b"}, []migrate.LegacyGroup{g("a")}}, kafka, `group "b": the store returned nothing`},
		{"topic not described", badLegacy{[]string{"a"}, []migrate.LegacyGroup{g("a")}}, badKafka{kafka, "t", ""}, `topic "t"`},
		{"group not described", badLegacy{[]string{"a"}, []migrate.LegacyGroup{g("a")}}, badKafka{kafka, "", "a"}, `group "a" from kafka`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := migrate.ReadInputs(t.Context(), tt.legacy, tt.kafka, migrate.Filter{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestPlanCommitReplan runs the whole read-plan-write cycle on the fakes: after the writes,
// a new plan has nothing left to do and its fingerprint differs.
func TestPlanCommitReplan(t *testing.T) {
	legacy, kafka := fakeStores()
	f, err := migrate.NewFilter(nil, "", "", "^svc-a$") // svc-a has live consumers
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	in, err := migrate.ReadInputs(ctx, legacy, kafka, f)
	if err != nil {
		t.Fatal(err)
	}
	plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
	writes := plan.Writes()
	if len(writes) != 2 || writes[0].Group != "svc-b" || writes[1].Group != "test-c" {
		t.Fatalf("writes = %+v, want svc-b and test-c", writes)
	}
	for _, w := range writes {
		res, err := kafka.Commit(ctx, w.Group, w.Commits(nil))
		if err != nil || len(res) != len(w.Entries) || slices.ContainsFunc(res, func(c migrate.CommitError) bool { return c.Err != nil }) {
			t.Fatalf("commit %s: %+v, %v", w.Group, res, err)
		}
	}
	if got := kafka.Commits(); len(got) != 2 || got[0].Group != "svc-b" || got[0].Offset != 9 || got[1].Offset != 1 {
		t.Fatalf("recorded commits = %+v", got)
	}
	again, err := migrate.ReadInputs(ctx, legacy, kafka, f)
	if err != nil {
		t.Fatal(err)
	}
	replan := migratetest.MustBuild(t, again, migrate.DefaultPolicy())
	if replan.Fingerprint == plan.Fingerprint {
		t.Errorf("fingerprint unchanged after commits")
	}
	if len(replan.Writes()) != 0 || !replan.Safe() || replan.Summary().ByClass[migrate.ClassEqual] != 2 {
		t.Fatalf("replan summary %+v, want two equal partitions and nothing to write", replan.Summary())
	}
	if again2, err := migrate.ReadInputs(ctx, legacy, kafka, f); err != nil || migrate.Fingerprint(again2) != replan.Fingerprint {
		t.Fatalf("a read without changes gave another fingerprint (%v)", err)
	}
}
