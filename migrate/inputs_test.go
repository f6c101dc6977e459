package migrate_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func fakeStores() (*migratetest.LegacyStore, *migratetest.KafkaStore) {
	bad := off("svc-a", "orders", 5, 0)
	bad.Invalid = "sentinel -1"
	legacy := migratetest.NewLegacyStore(
		migrate.LegacyGroup{Group: "svc-a", LiveConsumers: []string{"c1"},
			Offsets: []migrate.LegacyOffset{off("svc-a", "orders", 0, 5), off("svc-a", "gone", 0, 1), off("svc-a", "logs", 0, 3), bad}},
		migrate.LegacyGroup{Group: "svc-b", Offsets: []migrate.LegacyOffset{off("svc-b", "logs", 0, 9)}},
		migrate.LegacyGroup{Group: "test-c", Offsets: []migrate.LegacyOffset{off("test-c", "orders", 0, 1)}},
	)
	kafka := migratetest.NewKafkaStore()
	kafka.AddTopic("orders", migrate.PartitionRange{LogStart: 0, LogEnd: 10})
	kafka.AddTopic("logs", migrate.PartitionRange{LogStart: 0, LogEnd: 10})
	kafka.SetCommitted("svc-a", "orders", 0, 4)
	kafka.SetRetention(24 * time.Hour)
	return legacy, kafka
}

func TestReadInputs(t *testing.T) {
	legacy, kafka := fakeStores()
	f, err := migrate.NewFilter(nil, "^svc-", "^(orders|gone)$", "")
	if err != nil {
		t.Fatal(err)
	}
	in, err := migrate.ReadInputs(t.Context(), legacy, kafka, f)
	if err != nil {
		t.Fatalf("ReadInputs: %v", err)
	}
	// svc-b has only "logs": the topic filter leaves it nothing, so it is not in the plan.
	if len(in.Legacy) != 1 || in.Legacy[0].Group != "svc-a" || len(in.Legacy[0].Offsets) != 3 ||
		!slices.Equal(in.Legacy[0].LiveConsumers, []string{"c1"}) {
		t.Fatalf("Legacy = %+v", in.Legacy)
	}
	for _, o := range in.Legacy[0].Offsets {
		if o.Topic == "logs" {
			t.Errorf("offset of a filtered-out topic kept: %+v", o)
		}
	}
	// Only topics of valid offsets are described; an unknown one is there with Exists false.
	if got := slices.Sorted(maps.Keys(in.Topics)); !slices.Equal(got, []string{"gone", "orders"}) ||
		in.Topics["gone"].Exists || !in.Topics["orders"].Exists {
		t.Fatalf("Topics = %+v", in.Topics)
	}
	if g := in.Groups["svc-a"]; len(in.Groups) != 1 || g.State != "Empty" || g.Committed[migrate.TopicPartition{Topic: "orders"}] != 4 {
		t.Fatalf("Groups = %+v", in.Groups)
	}
	if in.Retention != 24*time.Hour || !reflect.DeepEqual(in.Filter, f.Spec()) {
		t.Fatalf("Retention %v, Filter %+v", in.Retention, in.Filter)
	}
	if topics, groups := kafka.Calls(); topics != 1 || groups != 1 || legacy.ReadCalls() != 1 {
		t.Fatalf("calls: topics %d, groups %d, legacy reads %d; want one each", topics, groups, legacy.ReadCalls())
	}
}

func TestReadInputsNamedGroups(t *testing.T) {
	legacy, kafka := fakeStores()
	f, err := migrate.NewFilter([]string{"test-c", "svc-b"}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	in, err := migrate.ReadInputs(t.Context(), legacy, kafka, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Legacy) != 2 || in.Legacy[0].Group != "svc-b" || in.Legacy[1].Group != "test-c" {
		t.Fatalf("Legacy = %+v, want svc-b and test-c in order", in.Legacy)
	}
	f, err = migrate.NewFilter([]string{"svc-b", "svc-typo"}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = migrate.ReadInputs(t.Context(), legacy, kafka, f)
	if !errors.Is(err, migrate.ErrGroupNotFound) || !strings.Contains(err.Error(), `"svc-typo"`) {
		t.Fatalf("error = %v, want ErrGroupNotFound naming svc-typo", err)
	}
}

// With nothing selected Kafka is not asked about topics or groups: an empty topic list would
// be a request for every topic of the cluster.
func TestReadInputsNothingSelected(t *testing.T) {
	legacy, kafka := fakeStores()
	f, err := migrate.NewFilter(nil, "^nothing$", "", "")
	if err != nil {
		t.Fatal(err)
	}
	f.AllowEmpty = true
	in, err := migrate.ReadInputs(t.Context(), legacy, kafka, f)
	if err != nil {
		t.Fatal(err)
	}
	if topics, groups := kafka.Calls(); len(in.Legacy) != 0 || topics != 0 || groups != 0 || legacy.ReadCalls() != 0 {
		t.Fatalf("Legacy %v, kafka calls %d/%d, legacy reads %d; want nothing", in.Legacy, topics, groups, legacy.ReadCalls())
	}
	if plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy()); len(plan.Groups) != 0 || !plan.Safe() {
		t.Fatalf("plan = %+v", plan)
	}
}

func TestReadInputsStoreErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		set  func(*migratetest.LegacyStore, *migratetest.KafkaStore)
		want string
	}{
		{"list", func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.FailList(boom) }, "list legacy groups"},
		{"read", func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.FailRead("svc-b", boom) }, `group "svc-b"`},
		{"kafka", func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.FailReads(boom) }, "kafka"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			legacy, kafka := fakeStores()
			tt.set(legacy, kafka)
			_, err := migrate.ReadInputs(t.Context(), legacy, kafka, migrate.Filter{})
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want boom wrapped with %q", err, tt.want)
			}
		})
	}
	legacy, kafka := fakeStores()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := migrate.ReadInputs(ctx, legacy, kafka, migrate.Filter{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: error %v", err)
	}
}
