package migrate_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
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
	p, err := migrate.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if p.Safe() || p.Groups[0].Entries[0].Class != migrate.ClassInvalidZnode {
		t.Fatalf("want a blocked invalid-znode entry, got %+v", p.Groups[0].Entries)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := migrate.WritePlanFile(path, p); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.ReadPlanFile(path); err != nil {
		t.Fatal(err)
	}
}
