package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func TestBuildGates(t *testing.T) {
	ungated := migratetest.MustBuild(t, migratetest.GateInputs(nil, "Empty", 0), migrate.DefaultPolicy()).Groups[0]
	wantActions := []migrate.Action{migrate.ActionWrite, migrate.ActionWrite, migrate.ActionSkip, migrate.ActionSkip, migrate.ActionBlock}
	for i, e := range ungated.Entries {
		if e.Action != wantActions[i] {
			t.Fatalf("setup: partition %d action %s, want %s", i, e.Action, wantActions[i])
		}
	}
	tests := []struct {
		name    string
		live    []string
		state   string
		members int
		want    []migrate.Gate
		mention []string // what the reason of a blocked write must name
		group   string   // what the group's GateReason names: the consumers, said once per group, not per entry
	}{
		{"none, group absent", nil, "", 0, nil, nil, ""},
		{"none, empty group", nil, "Empty", 0, nil, nil, ""},
		{"none, dead group", nil, "Dead", 0, nil, nil, ""},
		{"legacy consumers alive", []string{"c2", "c1"}, "Empty", 0,
			[]migrate.Gate{migrate.GateLegacyConsumersAlive}, []string{"legacy-consumers-alive", "2 live legacy consumers", "would write"}, "c1, c2"},
		{"kafka group stable", nil, "Stable", 3,
			[]migrate.Gate{migrate.GateKafkaGroupActive}, []string{"kafka-group-active", "Stable", "3 members"}, "(Kafka group Stable, 3 members)"},
		{"kafka group rebalancing, no members", nil, "PreparingRebalance", 0,
			[]migrate.Gate{migrate.GateKafkaGroupActive}, []string{"kafka-group-active", "PreparingRebalance"}, "PreparingRebalance, 0 members"},
		{"empty state but members", nil, "Empty", 2,
			[]migrate.Gate{migrate.GateKafkaGroupActive}, []string{"kafka-group-active", "2 members"}, "Empty, 2 members"},
		{"both", []string{"c1"}, "Stable", 1,
			[]migrate.Gate{migrate.GateLegacyConsumersAlive, migrate.GateKafkaGroupActive},
			[]string{"legacy-consumers-alive", "kafka-group-active"}, "(1 live legacy consumer: c1) and kafka-group-active (Kafka group Stable, 1 member)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := migratetest.MustBuild(t, migratetest.GateInputs(tt.live, tt.state, tt.members), migrate.DefaultPolicy())
			g := plan.Groups[0]
			if !slices.Equal(g.Gates, tt.want) {
				t.Fatalf("gates = %v, want %v", g.Gates, tt.want)
			}
			if g.KafkaState != tt.state || g.KafkaMembers != tt.members {
				t.Errorf("kafka state = %q/%d, want %q/%d", g.KafkaState, g.KafkaMembers, tt.state, tt.members)
			}
			if why := migrate.GateReason(g); !strings.Contains(why, tt.group) {
				t.Errorf("GateReason = %q, does not name %q", why, tt.group)
			}
			for i, e := range g.Entries {
				u := ungated.Entries[i]
				for _, c := range tt.live {
					if strings.Contains(e.Reason, c) {
						t.Errorf("partition %d: reason %q repeats the group's consumer %q", i, e.Reason, c)
					}
				}
				if e.Class != u.Class || e.Target != u.Target {
					t.Errorf("partition %d: class/target changed by gate: %s %d, was %s %d", i, e.Class, e.Target, u.Class, u.Target)
				}
				if len(tt.want) == 0 || u.Action != migrate.ActionWrite {
					if e.Action != u.Action || e.Reason != u.Reason {
						t.Errorf("partition %d: %s %q, want unchanged %s %q", i, e.Action, e.Reason, u.Action, u.Reason)
					}
					continue
				}
				if e.Action != migrate.ActionBlock {
					t.Errorf("partition %d: gated write has action %s, want block", i, e.Action)
				}
				for _, s := range tt.mention {
					if !strings.Contains(e.Reason, s) {
						t.Errorf("partition %d: reason %q does not name %q", i, e.Reason, s)
					}
				}
			}
			if plan.Safe() {
				t.Errorf("Safe() = true, want false (partition 4 always blocks)")
			}
		})
	}
}

func TestBuildLiveConsumersSortedAndDeduplicated(t *testing.T) {
	plan := migratetest.MustBuild(t, migratetest.GateInputs([]string{"b", "a", "b"}, "Empty", 0), migrate.DefaultPolicy())
	if got := plan.Groups[0].LiveConsumers; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("LiveConsumers = %v, want [a b]", got)
	}
}

// A gated group whose partitions are all in step needs nothing: the plan is safe.
func TestBuildGatedGroupWithNothingToWriteIsSafe(t *testing.T) {
	in := migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", LiveConsumers: []string{"c1"}, Offsets: []migrate.LegacyOffset{off("g", "t", 0, 5)}}},
		Topics: map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{LogStart: 0, LogEnd: 9})},
		Groups: map[string]migrate.GroupState{"g": {State: "Stable", Members: 1,
			Committed: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 5}}},
	}
	plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
	if !plan.Safe() || len(plan.Groups[0].Gates) != 2 {
		t.Fatalf("Safe() = %v, gates %v; want safe with both gates", plan.Safe(), plan.Groups[0].Gates)
	}
}
