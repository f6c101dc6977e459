package migrate_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// zkreader reports an offsets folder it may not list (ACL) as one invalid entry without a
// topic; such a plan must still save and load, blocked, rather than fail to be written.
func TestPlanWithUnlistableOffsetsFolderSaves(t *testing.T) {
	in := migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{
			{Topic: "", Partition: -1, Path: "/consumers/g/offsets", Invalid: "cannot list: access denied (ACL)"}}}},
		Topics: map[string]migrate.TopicInfo{},
		Groups: map[string]migrate.GroupState{"g": {}},
	}
	p, err := migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if p.Safe() || p.Groups[0].Entries[0].Class != migrate.ClassInvalidZnode {
		t.Fatalf("want a blocked invalid-znode entry, got %+v", p.Groups[0].Entries)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := migratetest.WritePlanFile(path, p); err != nil {
		t.Fatal(err)
	}
	if _, err := migratetest.ReadPlanFile(path); err != nil {
		t.Fatal(err)
	}
}

// A topic filter must not take a group out of the plan because its offsets folder could not be
// listed: its topics are unknown, the group must show blocked. A topic folder that could not be
// listed names its topic, and the filter applies to it as to any offset. Both ways of planning
// (ReadInputs and Build, the streamed Planner) must agree.
func TestTopicFilterKeepsUnlistableGroup(t *testing.T) {
	deniedFolder := migrate.LegacyGroup{Group: "folder", Offsets: []migrate.LegacyOffset{
		{Topic: "", Partition: -1, Path: "/consumers/folder/offsets", Invalid: "access denied (ACL): cannot list the group's topics"}}}
	deniedTopic := migrate.LegacyGroup{Group: "topic", Offsets: []migrate.LegacyOffset{
		{Topic: "t0", Partition: -1, Path: "/consumers/topic/offsets/t0", Invalid: "access denied (ACL): cannot list the topic's partitions"}}}
	plain := migrate.LegacyGroup{Group: "plain", Offsets: []migrate.LegacyOffset{
		{Topic: "t0", Partition: 0, Offset: 5, Path: "/consumers/plain/offsets/t0/0"}}}
	for _, tc := range []struct {
		topicRe string
		groups  []string // in the plan, in order
	}{
		{"", []string{"folder", "plain", "topic"}},
		{"^t0$", []string{"folder", "plain", "topic"}},
		{"^other$", []string{"folder"}},
	} {
		t.Run(tc.topicRe, func(t *testing.T) {
			legacy := migratetest.NewLegacyStore(deniedFolder, deniedTopic, plain)
			kafka := migratetest.NewKafkaStore()
			kafka.AddTopic("t0", migrate.PartitionRange{LogStart: 0, LogEnd: 10})
			f, err := migrate.NewFilter(nil, "", tc.topicRe, "")
			if err != nil {
				t.Fatal(err)
			}
			in, err := migrate.ReadInputs(t.Context(), legacy, kafka, f)
			if err != nil {
				t.Fatal(err)
			}
			built, err := migratetest.Build(in, migrate.DefaultPolicy(), migratetest.Now)
			if err != nil {
				t.Fatal(err)
			}
			sink := &collectSink{}
			pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Filter: f, Policy: migrate.DefaultPolicy()}
			tail, err := pl.Stream(t.Context(), migratetest.Now, sink)
			if err != nil {
				t.Fatal(err)
			}
			for name, gps := range map[string][]migrate.GroupPlan{"Build": built.Groups, "Planner": sink.groups} {
				var names []string
				for _, gp := range gps {
					names = append(names, gp.Group)
					if gp.Group == "folder" && (len(gp.Entries) != 1 || gp.Entries[0].Class != migrate.ClassInvalidZnode || gp.Entries[0].Action != migrate.ActionBlock) {
						t.Errorf("%s: the unlistable group's entries %+v, want one blocked invalid-znode", name, gp.Entries)
					}
				}
				if !slices.Equal(names, tc.groups) {
					t.Errorf("%s: groups %v, want %v", name, names, tc.groups)
				}
			}
			if built.Safe() || tail.Safe() {
				t.Errorf("plan safe (Build %v, Planner %v) with a group whose offsets could not be listed", built.Safe(), tail.Safe())
			}
		})
	}
}
