package migratetest

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Now stamps the plans of tests; no test compares it with the wall clock.
var Now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// GateInputs is one group "g" with a partition of each action on topic "t": p0 zk-only
// (write), p1 zk-ahead (write), p2 equal (skip), p3 kafka-ahead (skip under max), p4 below log
// start (block); live, state and members are the group's liveness and Kafka state.
func GateInputs(live []string, state string, members int) migrate.Inputs {
	tp := func(p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: "t", Partition: p} }
	off := func(p int32, v int64) migrate.LegacyOffset {
		return migrate.LegacyOffset{Topic: "t", Partition: p, Offset: v, Path: fmt.Sprintf("/consumers/g/offsets/t/%d", p)}
	}
	r := migrate.PartitionRange{LogStart: 10, LogEnd: 100}
	return migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", LiveConsumers: live, Offsets: []migrate.LegacyOffset{
			off(0, 50), off(1, 60), off(2, 50), off(3, 40), off(4, 5),
		}}},
		Topics: map[string]migrate.TopicInfo{"t": {Exists: true, Partitions: map[int32]migrate.PartitionRange{0: r, 1: r, 2: r, 3: r, 4: r}}},
		Groups: map[string]migrate.GroupState{"g": {State: state, Members: members,
			Committed: map[migrate.TopicPartition]int64{tp(1): 50, tp(2): 50, tp(3): 50}}},
	}
}

// Build is the whole plan migrate.Build computes, with its fingerprint: the plan a plan file
// made of in holds.
func Build(in migrate.Inputs, p migrate.Policy, now time.Time) (migrate.Plan, error) {
	plan, err := migrate.Build(in, p, now)
	if err != nil {
		return migrate.Plan{}, err
	}
	plan.Fingerprint = migrate.Fingerprint(in)
	return plan, nil
}

// MustBuild builds the plan at Now and checks what must hold for every plan Build returns: it
// validates, and it survives an encode/decode round trip unchanged.
func MustBuild(t testing.TB, in migrate.Inputs, p migrate.Policy) migrate.Plan {
	t.Helper()
	plan, err := Build(in, p, Now)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := plan.Validate(); err != nil {
		t.Fatalf("Build returned a plan that does not validate: %v", err)
	}
	var buf bytes.Buffer
	if err := EncodePlan(&buf, plan); err != nil {
		t.Fatalf("EncodePlan: %v", err)
	}
	back, err := DecodePlan(&buf)
	if err != nil {
		t.Fatalf("DecodePlan of an encoded plan: %v", err)
	}
	if !reflect.DeepEqual(Normalize(back), Normalize(plan)) {
		t.Fatalf("plan changed in a round trip:\n got %+v\nwant %+v", back, plan)
	}
	return plan
}

// Normalize makes time values comparable with DeepEqual after a JSON round trip.
func Normalize(p migrate.Plan) migrate.Plan {
	p.CreatedAt = p.CreatedAt.UTC()
	for gi := range p.Groups {
		for ei := range p.Groups[gi].Entries {
			e := &p.Groups[gi].Entries[ei]
			e.Mtime = e.Mtime.UTC()
		}
	}
	return p
}

// MapStores is the fixture of the group-map tests: legacy groups old (t/0=10, t/1=20) and
// other (t/2=30); Kafka group new is empty, Kafka group old holds nothing either.
func MapStores() (*LegacyStore, *KafkaStore) {
	legacy := NewLegacyStore()
	legacy.SetOffset("old", "t", 0, 10)
	legacy.SetOffset("old", "t", 1, 20)
	legacy.SetOffset("other", "t", 2, 30)
	kafka := NewKafkaStore()
	r := migrate.PartitionRange{LogStart: 0, LogEnd: 100}
	kafka.AddTopic("t", r, r, r)
	return legacy, kafka
}

// MapFilter is a filter that selects everything, under the group map m.
func MapFilter(t testing.TB, m migrate.GroupMap) migrate.Filter {
	t.Helper()
	f, err := migrate.NewFilter(nil, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	f.GroupMap = m
	return f
}
