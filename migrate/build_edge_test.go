package migrate_test

import (
	"math"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestBuildUnusableOffsets covers the classes decided before any comparison.
func TestBuildUnusableOffsets(t *testing.T) {
	bad := off("g", "t", 0, 0)
	bad.Invalid = `znode data "" is empty`
	tests := []struct {
		name   string
		o      migrate.LegacyOffset
		adjust int64
		topics map[string]migrate.TopicInfo
		class  migrate.Class
		zk     *int64
		reason []string
	}{
		{"invalid znode", bad, 0, nil, migrate.ClassInvalidZnode, nil, []string{`znode data "" is empty`}},
		{"invalid znode with adjust", bad, 5, nil, migrate.ClassInvalidZnode, nil, []string{`znode data "" is empty`}},
		{"negative adjust below zero", off("g", "t", 0, 3), -5, nil, migrate.ClassInvalidZnode, nil,
			[]string{"3", "--offset-adjust -5"}},
		{"negative adjust to zero is valid", off("g", "t", 0, 5), -5, map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{0, 9})},
			migrate.ClassZKOnly, ptr(0), []string{"ZooKeeper 0", "znode 5"}},
		{"adjust overflow", off("g", "t", 0, math.MaxInt64-1), 2, nil, migrate.ClassInvalidZnode, nil,
			[]string{"--offset-adjust +2", "overflow"}},
		{"negative offset not flagged by the reader", off("g", "t", 0, -1), 1, nil, migrate.ClassInvalidZnode, nil,
			[]string{"negative offset -1"}},
		{"negative partition not flagged by the reader", off("g", "t", -1, 5), 0, nil, migrate.ClassInvalidZnode, nil,
			[]string{"negative partition -1"}},
		{"topic missing", off("g", "gone", 0, 5), 0, map[string]migrate.TopicInfo{"gone": {}},
			migrate.ClassTopicMissing, ptr(5), []string{`"gone"`, "does not exist"}},
		{"topic missing but partitions listed", off("g", "gone", 0, 5), 0,
			map[string]migrate.TopicInfo{"gone": {Partitions: topic(migrate.PartitionRange{0, 9}).Partitions}},
			migrate.ClassTopicMissing, ptr(5), []string{"does not exist"}},
		{"partition missing", off("g", "t", 7, 5), -1, map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{0, 9}, migrate.PartitionRange{0, 9})},
			migrate.ClassPartitionMissing, ptr(4), []string{"no partition 7", "it has 2"}},
	}
	for _, tt := range tests {
		for _, pol := range policies() {
			pol.OffsetAdjust = tt.adjust
			t.Run(tt.name+"/"+string(pol.OnConflict)+"/"+string(pol.OutOfRange), func(t *testing.T) {
				in := migrate.Inputs{
					Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{tt.o}}},
					Topics: tt.topics,
					Groups: map[string]migrate.GroupState{"g": {State: "Empty", Committed: map[migrate.TopicPartition]int64{
						{Topic: tt.o.Topic, Partition: tt.o.Partition}: 1}}},
				}
				if tt.class == migrate.ClassZKOnly {
					in.Groups["g"] = migrate.GroupState{}
				}
				e := migratetest.MustBuild(t, in, pol).Groups[0].Entries[0]
				wantAction := migrate.ActionBlock
				if tt.class == migrate.ClassZKOnly {
					wantAction = migrate.ActionWrite
				}
				if e.Class != tt.class || e.Action != wantAction {
					t.Fatalf("got %s %s (%q), want %s %s", e.Class, e.Action, e.Reason, tt.class, wantAction)
				}
				if (e.ZK == nil) != (tt.zk == nil) || (e.ZK != nil && *e.ZK != *tt.zk) {
					t.Errorf("ZK = %v, want %v", e.ZK, tt.zk)
				}
				if e.Class == migrate.ClassInvalidZnode && (e.Kafka != nil || e.LogStart != nil) {
					t.Errorf("invalid znode carries Kafka %v / log %v", e.Kafka, e.LogStart)
				}
				if e.Znode != tt.o.Path || e.Topic != tt.o.Topic || e.Partition != tt.o.Partition {
					t.Errorf("entry names %s/%d %q, want %s/%d %q", e.Topic, e.Partition, e.Znode, tt.o.Topic, tt.o.Partition, tt.o.Path)
				}
				for _, s := range tt.reason {
					if !strings.Contains(e.Reason, s) {
						t.Errorf("reason %q does not contain %q", e.Reason, s)
					}
				}
			})
		}
	}
}

func TestBuildTwoZnodesForOnePartitionBlockBoth(t *testing.T) {
	a, b := off("g", "t", 3, 10), off("g", "t", 3, 20)
	b.Path = "/consumers/g/offsets/t/03"
	in := migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{a, b, off("g", "t", 1, 5)}}},
		Topics: map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{0, 99}, migrate.PartitionRange{0, 99},
			migrate.PartitionRange{0, 99}, migrate.PartitionRange{0, 99})},
		Groups: map[string]migrate.GroupState{"g": {}},
	}
	g := migratetest.MustBuild(t, in, migrate.DefaultPolicy()).Groups[0]
	if len(g.Entries) != 3 || g.Entries[0].Action != migrate.ActionWrite {
		t.Fatalf("entries = %+v, want partition 1 written and two blocked", g.Entries)
	}
	for _, e := range g.Entries[1:] {
		if e.Class != migrate.ClassInvalidZnode || e.Action != migrate.ActionBlock || e.ZK != nil ||
			!strings.Contains(e.Reason, a.Path) || !strings.Contains(e.Reason, b.Path) {
			t.Errorf("entry %s %s %s %q: want invalid-znode block naming both znodes", e.Znode, e.Class, e.Action, e.Reason)
		}
	}
}

// TestBuildRejectsIncompleteInputs: a plan from a partial read would be a guess.
func TestBuildRejectsIncompleteInputs(t *testing.T) {
	good := func() migrate.Inputs {
		return migrate.Inputs{
			Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{off("g", "t", 0, 5)}}},
			Topics: map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{0, 9})},
			Groups: map[string]migrate.GroupState{"g": {}},
		}
	}
	tests := []struct {
		name   string
		edit   func(*migrate.Inputs, *migrate.Policy)
		reason string
	}{
		{"unknown on-conflict", func(_ *migrate.Inputs, p *migrate.Policy) { p.OnConflict = "newest" }, "on-conflict"},
		{"unknown out-of-range", func(_ *migrate.Inputs, p *migrate.Policy) { p.OutOfRange = "" }, "out-of-range"},
		{"no kafka state for group", func(in *migrate.Inputs, _ *migrate.Policy) { delete(in.Groups, "g") }, `group "g"`},
		{"no topic description", func(in *migrate.Inputs, _ *migrate.Policy) { delete(in.Topics, "t") }, `topic "t"`},
		{"group twice", func(in *migrate.Inputs, _ *migrate.Policy) { in.Legacy = append(in.Legacy, in.Legacy[0]) }, "twice"},
		{"empty group name", func(in *migrate.Inputs, _ *migrate.Policy) {
			in.Legacy[0].Group = ""
			in.Groups[""] = migrate.GroupState{}
		}, "empty name"},
		{"negative kafka commit", func(in *migrate.Inputs, _ *migrate.Policy) {
			in.Groups["g"] = migrate.GroupState{Committed: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: -1}}
		}, "commit -1"},
		{"log end before start", func(in *migrate.Inputs, _ *migrate.Policy) { in.Topics["t"] = topic(migrate.PartitionRange{9, 3}) }, "start 9, end 3"},
		{"negative log start", func(in *migrate.Inputs, _ *migrate.Policy) { in.Topics["t"] = topic(migrate.PartitionRange{-1, 3}) }, "start -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, pol := good(), migrate.DefaultPolicy()
			if _, err := migratetest.Build(in, pol, migratetest.Now); err != nil {
				t.Fatalf("setup: %v", err)
			}
			tt.edit(&in, &pol)
			_, err := migratetest.Build(in, pol, migratetest.Now)
			if err == nil || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("Build error = %v, want one containing %q", err, tt.reason)
			}
		})
	}
}

// TestBuildNote: a legacy offset's note (zkreader's whitespace note) is said in its entry's
// reason, after the classification, whatever the class; an invalid znode's reason is its own.
func TestBuildNote(t *testing.T) {
	note := `znode data " 42" has whitespace around the offset: read as 42`
	in := migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{
			{Topic: "t", Partition: 0, Offset: 42, Path: "/consumers/g/offsets/t/0", Note: note},
			{Topic: "t", Partition: 1, Offset: 500, Path: "/consumers/g/offsets/t/1", Note: note},
			{Topic: "t", Partition: 2, Path: "/consumers/g/offsets/t/2", Invalid: "empty offset data", Note: note},
		}}},
		Topics: map[string]migrate.TopicInfo{"t": {Exists: true, Partitions: map[int32]migrate.PartitionRange{
			0: {LogEnd: 100}, 1: {LogEnd: 100}, 2: {LogEnd: 100}}}},
		Groups: map[string]migrate.GroupState{"g": {State: "Empty"}},
	}
	plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
	want := []string{"ZooKeeper 42; Kafka has no commit: write 42; " + note,
		"ZooKeeper 500 is above log end 100: --out-of-range=fail; " + note, "empty offset data"}
	for i, e := range plan.Groups[0].Entries {
		if e.Reason != want[i] {
			t.Errorf("partition %d reason %q, want %q", e.Partition, e.Reason, want[i])
		}
	}
}
