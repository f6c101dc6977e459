package archive

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

func entry(topic string, p int32, off *int64, expect *int64) Entry {
	return Entry{Key: migrate.Key{Group: "g", Topic: topic, Partition: p}, Offset: off, Expect: expect, Line: 1}
}

func kafkaState(committed map[int32]int64, state string, members int) State {
	gs := migrate.GroupState{State: state, Members: members, Committed: map[migrate.TopicPartition]int64{}}
	for p, o := range committed {
		gs.Committed[migrate.TopicPartition{Topic: "t", Partition: p}] = o
	}
	return State{
		Groups: map[string]Current{"g": {Kafka: gs}},
		Topics: map[string]migrate.TopicInfo{
			"t":    {Exists: true, Partitions: map[int32]migrate.PartitionRange{0: {LogStart: 2, LogEnd: 100}, 1: {LogEnd: 100}}},
			"gone": {Exists: false},
		},
	}
}

func TestPlanRestoreKafka(t *testing.T) {
	cases := []struct {
		name   string
		e      Entry
		st     State
		force  bool
		status copier.PartitionStatus
		reason string
	}{
		{"write over nothing", entry("t", 0, ptr[int64](10), nil), kafkaState(nil, "", 0), false, copier.StatusWouldWrite, "Kafka has none: write 10"},
		{"write backwards", entry("t", 0, ptr[int64](10), nil), kafkaState(map[int32]int64{0: 15}, "Empty", 0), false, copier.StatusWouldWrite, "BACKWARDS by 5"},
		{"already", entry("t", 0, ptr[int64](10), nil), kafkaState(map[int32]int64{0: 10}, "Empty", 0), false, copier.StatusAlready, "already"},
		{"topic missing", entry("gone", 0, ptr[int64](10), nil), kafkaState(nil, "", 0), false, copier.StatusBlocked, "does not exist"},
		{"partition missing", entry("t", 7, ptr[int64](10), nil), kafkaState(nil, "", 0), false, copier.StatusBlocked, "no partition 7"},
		{"below log start", entry("t", 0, ptr[int64](1), nil), kafkaState(nil, "", 0), false, copier.StatusBlocked, "outside the partition's log [2, 100]"},
		{"above log end", entry("t", 0, ptr[int64](101), nil), kafkaState(nil, "", 0), false, copier.StatusBlocked, "outside"},
		{"active group", entry("t", 0, ptr[int64](10), nil), kafkaState(nil, "Stable", 1), true, copier.StatusBlocked, "kafka-group-active"},
		{"backup puts the previous commit back", entry("t", 0, ptr[int64](5), ptr[int64](10)), kafkaState(map[int32]int64{0: 10}, "Empty", 0), false, copier.StatusWouldWrite, "write 5"},
		{"backup: no commit before, none now", entry("t", 0, nil, ptr[int64](10)), kafkaState(nil, "", 0), false, copier.StatusAlready, "no commit"},
		{"backup: no commit before is not restorable", entry("t", 0, nil, ptr[int64](10)), kafkaState(map[int32]int64{0: 10}, "Empty", 0), false, copier.StatusBlocked, "not restorable"},
		{"backup: the copy never committed", entry("t", 0, ptr[int64](5), ptr[int64](10)), kafkaState(map[int32]int64{0: 5}, "Empty", 0), false, copier.StatusAlready, "already holds"},
		{"backup: kafka moved since the copy", entry("t", 0, ptr[int64](5), ptr[int64](10)), kafkaState(map[int32]int64{0: 12}, "Empty", 0), false, copier.StatusBlocked, "moved since the copy"},
		{"backup: kafka moved, forced", entry("t", 0, ptr[int64](5), ptr[int64](10)), kafkaState(map[int32]int64{0: 12}, "Empty", 0), true, copier.StatusWouldWrite, "BACKWARDS by 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Format: FormatJSON, Entries: []Entry{tc.e}}
			if tc.e.Expect != nil {
				f.Format = FormatBackup
			}
			p, err := PlanRestore(f, TargetKafka, tc.st, Options{Force: tc.force})
			if err != nil {
				t.Fatal(err)
			}
			it := p.Groups[0].Items[0]
			if it.Status != tc.status || !strings.Contains(it.Reason, tc.reason) {
				t.Errorf("%s %q, want %s with %q", it.Status, it.Reason, tc.status, tc.reason)
			}
		})
	}
}

func TestPlanRestoreLiveLegacyConsumers(t *testing.T) {
	f := File{Format: FormatCSV, Entries: []Entry{entry("t", 0, ptr[int64](10), nil)}}
	for _, tc := range []struct {
		to     Target
		force  bool
		status copier.PartitionStatus
	}{
		{TargetKafka, false, copier.StatusBlocked},
		{TargetKafka, true, copier.StatusBlocked}, // --force is for ZooKeeper only
		{TargetZK, false, copier.StatusBlocked},
		{TargetZK, true, copier.StatusWouldWrite},
	} {
		st := kafkaState(nil, "", 0)
		st.Groups["g"] = Current{LiveConsumers: []string{"ids/c1"}}
		p, err := PlanRestore(f, tc.to, st, Options{Force: tc.force})
		if err != nil {
			t.Fatal(err)
		}
		if it := p.Groups[0].Items[0]; it.Status != tc.status {
			t.Errorf("--to %s force %t: %s %q, want %s", tc.to, tc.force, it.Status, it.Reason, tc.status)
		}
	}
}

func TestPlanRestoreZK(t *testing.T) {
	zk := []migrate.LegacyOffset{
		{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g/offsets/t/0"},
		{Topic: "t", Partition: 1, Path: "/consumers/g/offsets/t/1", Invalid: "empty offset data"},
	}
	f := File{Format: FormatJSON, Entries: []Entry{entry("t", 0, ptr[int64](10), nil), entry("t", 1, ptr[int64](4), nil), entry("t", 2, ptr[int64](9), nil)}}
	p, err := PlanRestore(f, TargetZK, State{Groups: map[string]Current{"g": {ZK: zk}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := p.Groups[0].Items
	want := []struct {
		status copier.PartitionStatus
		reason string
	}{{copier.StatusAlready, "already"}, {copier.StatusWouldWrite, "replaces an invalid znode"}, {copier.StatusWouldWrite, "ZooKeeper has none"}}
	for i, w := range want {
		if items[i].Status != w.status || !strings.Contains(items[i].Reason, w.reason) {
			t.Errorf("item %d: %s %q, want %s %q", i, items[i].Status, items[i].Reason, w.status, w.reason)
		}
	}
	if items[1].CurrentInvalid == "" || items[1].CurrentZnode != "/consumers/g/offsets/t/1" {
		t.Errorf("invalid znode not recorded: %+v", items[1])
	}
	if c := p.Counts(); c[copier.StatusWouldWrite] != 2 || c[copier.StatusAlready] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestPlanRestoreZKNames(t *testing.T) {
	f := File{Format: FormatCSV, Entries: []Entry{{Key: migrate.Key{Group: "a/b", Topic: "t"}, Offset: ptr[int64](1)}}}
	st := State{Groups: map[string]Current{"a/b": {}}, Topics: map[string]migrate.TopicInfo{"t": {Exists: true,
		Partitions: map[int32]migrate.PartitionRange{0: {LogEnd: 5}}}}}
	p, err := PlanRestore(f, TargetZK, st, Options{})
	if err != nil || p.Groups[0].Items[0].Status != copier.StatusBlocked || !strings.Contains(p.Groups[0].Items[0].Reason, "znode name") {
		t.Fatalf("zk: %+v %v", p, err)
	}
	if p, err := PlanRestore(f, TargetKafka, st, Options{}); err != nil || p.Groups[0].Items[0].Status != copier.StatusWouldWrite {
		t.Fatalf("kafka: a '/' is a fine group name there: %+v %v", p, err)
	}
}

func TestPlanRestoreRefusals(t *testing.T) {
	backup := File{Format: FormatBackup, Entries: []Entry{entry("t", 0, ptr[int64](1), ptr[int64](2))}}
	if _, err := PlanRestore(backup, TargetZK, State{Groups: map[string]Current{"g": {}}}, Options{}); err == nil || !strings.Contains(err.Error(), "--to kafka") {
		t.Errorf("backup to zk: %v", err)
	}
	csv := File{Format: FormatCSV, Entries: []Entry{entry("t", 0, ptr[int64](1), nil)}}
	if _, err := PlanRestore(csv, TargetKafka, State{Groups: map[string]Current{}}, Options{}); err == nil {
		t.Error("a group without state was planned")
	}
	if _, err := PlanRestore(csv, TargetKafka, State{Groups: map[string]Current{"g": {}}}, Options{}); err == nil {
		t.Error("a topic without description was planned")
	}
	if _, err := PlanRestore(csv, "s3", State{}, Options{}); err == nil {
		t.Error("unknown target accepted")
	}
}

func TestSelect(t *testing.T) {
	f := File{Entries: []Entry{entry("t", 0, ptr[int64](1), nil), {Key: migrate.Key{Group: "h", Topic: "u", Partition: 0}, Offset: ptr[int64](1)}}}
	flt, err := migrate.NewFilter([]string{"h"}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Select(flt)
	if err != nil || len(got.Entries) != 1 || got.Entries[0].Group != "h" || len(f.Entries) != 2 {
		t.Fatalf("select: %+v %v", got, err)
	}
	flt, _ = migrate.NewFilter([]string{"typo"}, "", "", "")
	if _, err := f.Select(flt); err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Errorf("unknown group: %v", err)
	}
	if g := f.Groups(); len(g) != 2 || g[0] != "g" {
		t.Errorf("groups %v", g)
	}
}

// TestPlanRestoreZKPaddedNames: a name with spaces around it is legal and this tool's own files
// carry it, so it is restored over a znode that exists; a new znode so named (the likely slip
// of a hand-edited CSV, "g, t,0,15") is held back unless --force.
func TestPlanRestoreZKPaddedNames(t *testing.T) {
	existing := []migrate.LegacyOffset{{Topic: " t", Partition: 0, Offset: 3, Path: "/consumers/g/offsets/ t/0"}}
	// A padded group ZooKeeper holds, restored on a partition it has no znode for yet (the
	// rollback after Kafka consumers started on new partitions).
	paddedGroup := []migrate.LegacyOffset{{Topic: "t", Partition: 1, Offset: 3, Path: "/consumers/g /offsets/t/1"}}
	cases := []struct {
		name, group, topic string
		zk                 []migrate.LegacyOffset
		force              bool
		status             copier.PartitionStatus
		reason             string
	}{
		{"new znode, padded topic", "g", " t", nil, false, copier.StatusBlocked, `topic " t": a name with spaces around it`},
		{"new znode, non-breaking space", "g", "t\u00a0", nil, false, copier.StatusBlocked, "spaces around it"},
		{"new znode, padded group", "g ", "t", nil, false, copier.StatusBlocked, `group "g " topic "t"`},
		{"new znode, forced", "g", " t", nil, true, copier.StatusWouldWrite, "ZooKeeper has none"},
		{"existing znode", "g", " t", existing, false, copier.StatusWouldWrite, "write 5"},
		{"known padded group, new partition", "g ", "t", paddedGroup, false, copier.StatusWouldWrite, "ZooKeeper has none"},
		{"known padded topic, new partition", "g", " t", []migrate.LegacyOffset{{Topic: " t", Partition: 7, Offset: 1}}, false, copier.StatusWouldWrite, "ZooKeeper has none"},
		{"known group, new padded topic", "g", " t", paddedGroup, false, copier.StatusBlocked, "does not have"},
		{"plain names", "g", "t", nil, false, copier.StatusWouldWrite, "ZooKeeper has none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Format: FormatCSV, Entries: []Entry{{Key: migrate.Key{Group: tc.group, Topic: tc.topic}, Offset: ptr[int64](5), Line: 1}}}
			p, err := PlanRestore(f, TargetZK, State{Groups: map[string]Current{tc.group: {ZK: tc.zk}}}, Options{Force: tc.force})
			if err != nil {
				t.Fatal(err)
			}
			it := p.Groups[0].Items[0]
			if it.Status != tc.status || !strings.Contains(it.Reason, tc.reason) {
				t.Errorf("%s %q, want %s with %q", it.Status, it.Reason, tc.status, tc.reason)
			}
		})
	}
}
