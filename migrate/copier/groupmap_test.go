package copier_test

import (
	"context"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func TestCopyUnderGroupMap(t *testing.T) {
	cases := []struct {
		name    string
		m       migrate.GroupMap
		change  func(l *migratetest.LegacyStore, k *migratetest.KafkaStore) // after the plan
		want    map[string]copier.PartitionStatus
		commits map[string]map[migrate.TopicPartition]int64 // Kafka groups afterwards
	}{
		{name: "renamed group lands in the new group", m: migrate.GroupMap{"old": "new"},
			want: map[string]copier.PartitionStatus{"old/t/0": copier.StatusWritten, "old/t/1": copier.StatusWritten, "other/t/2": copier.StatusWritten},
			commits: map[string]map[migrate.TopicPartition]int64{
				"new":   {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20},
				"old":   {},
				"other": {{Topic: "t", Partition: 2}: 30}}},
		{name: "disjoint merge: both land in one group", m: migrate.GroupMap{"old": "k", "other": "k"},
			want: map[string]copier.PartitionStatus{"old/t/0": copier.StatusWritten, "old/t/1": copier.StatusWritten, "other/t/2": copier.StatusWritten},
			commits: map[string]map[migrate.TopicPartition]int64{
				"k":   {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20, {Topic: "t", Partition: 2}: 30},
				"old": {}, "other": {}}},
		{name: "new group became active before the commit: blocked", m: migrate.GroupMap{"old": "new"},
			change:  func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("new", "Stable", 1) },
			want:    map[string]copier.PartitionStatus{"old/t/0": copier.StatusBlocked, "old/t/1": copier.StatusBlocked, "other/t/2": copier.StatusWritten},
			commits: map[string]map[migrate.TopicPartition]int64{"new": {}, "other": {{Topic: "t", Partition: 2}: 30}}},
		{name: "legacy consumer of the old group came back: blocked", m: migrate.GroupMap{"old": "new"},
			change:  func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.SetLive("old", "ids/c1") },
			want:    map[string]copier.PartitionStatus{"old/t/0": copier.StatusBlocked, "old/t/1": copier.StatusBlocked, "other/t/2": copier.StatusWritten},
			commits: map[string]map[migrate.TopicPartition]int64{"new": {}}},
		{name: "old Kafka group active does not block a renamed group", m: migrate.GroupMap{"old": "new"},
			change:  func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("old", "Stable", 1) },
			want:    map[string]copier.PartitionStatus{"old/t/0": copier.StatusWritten, "old/t/1": copier.StatusWritten, "other/t/2": copier.StatusWritten},
			commits: map[string]map[migrate.TopicPartition]int64{"new": {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := migratetest.MapStores()
			in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migratetest.MapFilter(t, tc.m))
			if err != nil {
				t.Fatal(err)
			}
			p, err := migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(legacy, kafka)
			}
			b := &memBackup{}
			c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: b}
			res, err := migratetest.RunCopier(context.Background(), c, p, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(res); !maps.Equal(got, tc.want) {
				t.Fatalf("statuses %v, want %v", got, tc.want)
			}
			for g, want := range tc.commits {
				if got := committed(t, kafka, g); !maps.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Errorf("Kafka group %s holds %v, want %v", g, got, want)
				}
			}
			for _, r := range kafka.Commits() {
				if tc.m.Kafka(r.Group) != r.Group && tc.m[r.Group] != "" {
					t.Errorf("a commit went to legacy name %q", r.Group)
				}
			}
			for _, g := range res.Groups {
				if k := tc.m.Kafka(g.Group); (k != g.Group) != (g.KafkaGroup == k) {
					t.Errorf("result of %s names Kafka group %q, want %q", g.Group, g.KafkaGroup, k)
				}
			}
		})
	}
}

func TestBackupNamesTheKafkaGroup(t *testing.T) {
	legacy, kafka := migratetest.MapStores()
	kafka.SetCommitted("new", "t", 0, 3)
	in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migratetest.MapFilter(t, migrate.GroupMap{"old": "new"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/backup.jsonl"
	b, err := copier.CreateBackup(path, p.Fingerprint, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: b}
	if _, err := migratetest.RunCopier(context.Background(), c, p, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []copier.BackupLine
	recs = copier.ParseBackup(data, func(line int, msg string) { t.Errorf("line %d: %s", line, msg) })
	found := false
	for _, r := range recs {
		if r.Topic == "t" && r.Partition == 0 {
			found = true
			if r.Group != "new" || r.LegacyGroup != "old" || r.KafkaBefore == nil || *r.KafkaBefore != 3 {
				t.Errorf("backup record %+v, want group new (legacy old) before 3", r.BackupRecord)
			}
		}
	}
	if !found {
		t.Fatalf("no backup record of t/0 in %s", data)
	}
}
