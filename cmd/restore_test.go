package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func kafkaOffsets(t *testing.T, s writableStores, group string) map[string]int64 {
	t.Helper()
	st, err := s.kafka.Groups(context.Background(), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for tp, o := range st[group].Committed {
		out[tp.String()] = o
	}
	return out
}

type restoreDoc struct {
	Backup string                         `json:"backup"`
	Plan   archive.Plan                   `json:"restore"`
	Counts map[copier.PartitionStatus]int `json:"counts"`
}

func restoreRun(t *testing.T, s writableStores, wantCode int, args ...string) restoreDoc {
	t.Helper()
	out, errOut, code := runWith(t, s, nil, append([]string{"restore", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("restore %v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, errOut)
	}
	var d restoreDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("restore %v: %v\n%s\n%s", args, err, out, errOut)
	}
	return d
}

// TestRestoreKafkaThenUndo restores a ZooKeeper export into Kafka (moving g1 t/1 back from 30
// to 20, as a restore may), re-runs it (nothing to do), then restores the restore's own backup,
// which puts 30 back and reports the two partitions Kafka had no commit for as not restorable.
func TestRestoreKafkaThenUndo(t *testing.T) {
	s := writableFixture()
	dir := t.TempDir()
	exp := filepath.Join(dir, "zk.json")
	if _, errOut, code := runWith(t, s, nil, "export", "--file", exp); code != ExitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	d := restoreRun(t, s, ExitOK, "--to", "kafka", "--file", exp)
	if d.Counts[copier.StatusWouldWrite] != 3 || !d.Plan.DryRun || len(s.kafka.Commits()) != 0 {
		t.Fatalf("dry run: %+v, %d commits", d.Counts, len(s.kafka.Commits()))
	}
	backup := filepath.Join(dir, "backup.jsonl")
	d = restoreRun(t, s, ExitOK, "--to", "kafka", "--file", exp, "--execute", "--backup", backup)
	if d.Counts[copier.StatusWritten] != 3 || d.Backup != backup {
		t.Fatalf("execute: %+v", d)
	}
	if got := kafkaOffsets(t, s, "g1"); got["t/0"] != 10 || got["t/1"] != 20 {
		t.Fatalf("kafka after restore: %v", got)
	}
	for _, c := range s.kafka.Commits() {
		if !strings.HasPrefix(c.Metadata, "zk2kafka ") {
			t.Errorf("commit metadata %q", c.Metadata)
		}
	}
	d = restoreRun(t, s, ExitOK, "--to", "kafka", "--file", exp, "--execute", "--backup", filepath.Join(dir, "b2.jsonl"))
	if d.Counts[copier.StatusAlready] != 3 || len(d.Counts) != 1 || d.Backup != "" {
		t.Fatalf("re-run: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "b2.jsonl")); err == nil {
		t.Error("a backup was created with nothing to write")
	}

	d = restoreRun(t, s, ExitUnsafe, "--to", "kafka", "--file", backup, "--execute", "--backup", filepath.Join(dir, "b3.jsonl"))
	if d.Counts[copier.StatusWritten] != 1 || d.Counts[copier.StatusBlocked] != 2 || d.Plan.Format != archive.FormatBackup {
		t.Fatalf("undo: %+v", d)
	}
	if got := kafkaOffsets(t, s, "g1"); got["t/1"] != 30 || got["t/0"] != 10 {
		t.Fatalf("kafka after undo: %v", got)
	}
	if it := d.Plan.Groups[0].Items[0]; !strings.Contains(it.Reason, "not restorable") || !strings.Contains(it.Reason, "--delete-offsets") {
		t.Errorf("no-commit partition: %+v", it)
	}
}

func TestRestoreBackupMovedSinceCopy(t *testing.T) {
	s := writableFixture()
	backup := writeFile(t, "b.jsonl", `{"zk2kafka_backup":1,"created_at":"2025-01-01T00:00:00Z","plan_fingerprint":"f"}
{"group":"g1","topic":"t","partition":1,"kafka_before":25,"target":28}
`)
	d := restoreRun(t, s, ExitUnsafe, "--to", "kafka", "--file", backup, "--execute")
	if it := d.Plan.Groups[0].Items[0]; it.Status != copier.StatusBlocked || !strings.Contains(it.Reason, "moved since the copy") || len(s.kafka.Commits()) != 0 {
		t.Fatalf("moved: %+v", it)
	}
	d = restoreRun(t, s, ExitOK, "--to", "kafka", "--file", backup, "--execute", "--force", "--backup", filepath.Join(t.TempDir(), "b"))
	if got := kafkaOffsets(t, s, "g1"); got["t/1"] != 25 || d.Counts[copier.StatusWritten] != 1 {
		t.Fatalf("forced: %v %+v", got, d.Counts)
	}
	if _, errOut, code := runWith(t, s, nil, "restore", "--to", "zk", "--file", backup); code != ExitError || !strings.Contains(errOut, "--to kafka") {
		t.Errorf("backup --to zk: exit %d %s", code, errOut)
	}
}

func TestRestoreZK(t *testing.T) {
	s := writableFixture()
	csv := writeFile(t, "r.csv", "g1,t,0,15\ng9,t,0,3\n")
	d := restoreRun(t, s, ExitOK, "--to", "zk", "--file", csv)
	if d.Counts[copier.StatusWouldWrite] != 2 || s.legacy.writeCount() != 0 {
		t.Fatalf("dry run: %+v", d.Counts)
	}
	s.legacy.SetGroup(migrate.LegacyGroup{Group: "g1", LiveConsumers: []string{"ids/c"},
		Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g1/offsets/t/0"}}})
	d = restoreRun(t, s, ExitUnsafe, "--to", "zk", "--file", csv, "--execute", "--backup", filepath.Join(t.TempDir(), "x.json"))
	if d.Counts[copier.StatusBlocked] != 1 || d.Counts[copier.StatusWritten] != 1 {
		t.Fatalf("live consumers: %+v", d.Counts)
	}
	backup := filepath.Join(t.TempDir(), "zk-before.json")
	d = restoreRun(t, s, ExitOK, "--to", "zk", "--file", csv, "--execute", "--force", "--backup", backup)
	if d.Counts[copier.StatusWritten] != 1 || d.Counts[copier.StatusAlready] != 1 {
		t.Fatalf("forced: %+v", d.Counts)
	}
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	f, err := archive.Parse(data)
	if err != nil || f.Source != archive.SourceZK || len(f.Entries) != 1 || *f.Entries[0].Offset != 10 || f.Entries[0].Group != "g1" {
		t.Fatalf("zk backup: %v %+v\n%s", err, f, data)
	}
	in, err := migrate.ReadInputs(context.Background(), s.legacy, migrate.NoKafka{}, migrate.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, g := range in.Legacy {
		for _, o := range g.Offsets {
			got[g.Group+"/"+o.Topic] = o.Offset
		}
	}
	if got["g1/t"] != 15 || got["g9/t"] != 3 {
		t.Errorf("zk after restore: %v", got)
	}
}

// TestRestoreSingleGroupCSV: the consumer-groups tool's topic,partition,offset file restores
// into the one --group given, and is refused, saying what to add, with none or with two.
func TestRestoreSingleGroupCSV(t *testing.T) {
	s := writableFixture()
	csv := writeFile(t, "reset.csv", "t,0,15\nt,1,20\n")
	d := restoreRun(t, s, ExitOK, "--to", "kafka", "--group", "g1", "--file", csv, "--execute", "--backup", filepath.Join(t.TempDir(), "b"))
	if d.Counts[copier.StatusWritten] != 2 || len(d.Plan.Groups) != 1 || d.Plan.Groups[0].Group != "g1" {
		t.Fatalf("restore: %+v", d)
	}
	if got := kafkaOffsets(t, s, "g1"); got["t/0"] != 15 || got["t/1"] != 20 {
		t.Fatalf("kafka after restore: %v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "line 1: 3 fields (topic,partition,offset): the consumer-groups tool's form for one group: add --group <name>"},
		{[]string{"--group", "g1,g2"}, "give exactly one --group"},
		{[]string{"--group-regex", "^g1$"}, "add --group <name>"},
	} {
		if tc.args == nil {
			// A --group left in the environment (for other runs) must not name the owner.
			t.Setenv("ZK2KAFKA_GROUP", "g1")
		}
		s := writableFixture()
		args := append([]string{"restore", "--to", "kafka", "--file", csv, "--execute"}, tc.args...)
		if _, errOut, code := runWith(t, s, nil, args...); code != ExitError || !strings.Contains(errOut, tc.want) || len(s.kafka.Commits()) != 0 {
			t.Errorf("%v: exit %d, %d commits, stderr %q; want %q", tc.args, code, len(s.kafka.Commits()), errOut, tc.want)
		}
	}
}

// TestRestoreListsWhatChanges: the table of a restore of a whole file lists the partitions it
// would change and those it cannot (blocked), and counts the ones already holding the file's
// offset in one line; --all lists them too, and JSON always has them all.
func TestRestoreListsWhatChanges(t *testing.T) {
	s := writableFixture()
	var ranges []migrate.PartitionRange
	var b strings.Builder
	for p := range 50 {
		ranges = append(ranges, migrate.PartitionRange{LogEnd: 1000})
		s.kafka.SetCommitted("g1", "u", int32(p), 100)
		fmt.Fprintf(&b, "g1,u,%d,100\n", p)
	}
	s.kafka.AddTopic("u", ranges...)
	b.WriteString("g1,t,0,12\ng1,t,1,30\ng1,t,7,1\n") // t/0 changes, t/1 is already 30, t/7 does not exist
	csv := writeFile(t, "all.csv", b.String())
	args := []string{"restore", "--to", "kafka", "--file", csv}
	out, errOut, code := runWith(t, s, nil, args...)
	if code != ExitUnsafe {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rows := g1Rows(out)
	if len(rows) != 2 || !strings.Contains(rows[0], "would-write") || !strings.Contains(rows[1], "blocked") {
		t.Errorf("rows %q, want t/0 would-write and t/7 blocked\n%s", rows, out)
	}
	if !strings.Contains(out, "51 partition(s) unchanged: Kafka already holds the file's offset (not listed; --all lists every partition).") {
		t.Errorf("no count line of the unchanged partitions:\n%s", out)
	}
	out, _, _ = runWith(t, s, nil, append(args, "--all")...)
	if rows := g1Rows(out); len(rows) != 53 || strings.Contains(out, "unchanged") {
		t.Errorf("--all: %d rows, want 53\n%s", len(rows), out)
	}
	d := restoreRun(t, s, ExitUnsafe, "--to", "kafka", "--file", csv)
	if n := len(d.Plan.Groups[0].Items); n != 53 || d.Counts[copier.StatusAlready] != 51 {
		t.Errorf("JSON: %d items, counts %v; want all 53", n, d.Counts)
	}
}

// g1Rows returns the data rows of a table in out (the lines naming group g1).
func g1Rows(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " g1 ") {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestRestoreRefusals(t *testing.T) {
	good := writeFile(t, "ok.csv", "g1,t,0,15\n")
	cases := []struct {
		name     string
		args     []string
		mutate   func(writableStores)
		wantCode int
		wantErr  string
	}{
		{"no target", []string{"restore", "--file", good}, nil, ExitError, "--to is required"},
		{"bad target", []string{"restore", "--to", "s3", "--file", good}, nil, ExitError, "--to"},
		{"no file", []string{"restore", "--to", "kafka"}, nil, ExitError, "--file is required"},
		{"missing file", []string{"restore", "--to", "kafka", "--file", "/nonexistent/f"}, nil, ExitError, "no such file"},
		{"bad line", []string{"restore", "--to", "kafka", "--execute", "--file", writeFile(t, "bad.csv", "g1,t,0,15\ng1,t,1,x\n")}, nil, ExitError,
			"line 2: offset \"x\""},
		{"group not in file", []string{"restore", "--to", "kafka", "--file", good, "--group", "g2"}, nil, ExitError, `group "g2" (--group) is not in the file`},
		{"active kafka group", []string{"restore", "--to", "kafka", "--file", good, "--execute"},
			func(s writableStores) { s.kafka.SetGroup("g1", "Stable", 1) }, ExitUnsafe, "blocked"},
		{"live legacy consumers, to kafka", []string{"restore", "--to", "kafka", "--file", good, "--execute", "--force"},
			func(s writableStores) {
				s.legacy.SetGroup(migrate.LegacyGroup{Group: "g1", LiveConsumers: []string{"ids/c"}})
			}, ExitUnsafe, "blocked"},
		{"kafka down", []string{"restore", "--to", "kafka", "--file", good}, func(s writableStores) { s.kafka.FailReads(errBoom) }, ExitError, "boom"},
		{"commit fails", []string{"restore", "--to", "kafka", "--file", good, "--execute", "--backup", filepath.Join(t.TempDir(), "b")},
			func(s writableStores) { s.kafka.FailCommits(errBoom) }, ExitError, "1 partition(s) failed"},
		{"unwritable backup", []string{"restore", "--to", "kafka", "--file", good, "--execute", "--backup", "/nonexistent/dir/b"}, nil, ExitError,
			"nothing was written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := writableFixture()
			if tc.mutate != nil {
				tc.mutate(s)
			}
			out, errOut, code := runWith(t, s, nil, tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, tc.wantErr, out, errOut)
			}
			if tc.name != "commit fails" && (len(s.kafka.Commits()) != 0 || s.legacy.writeCount() != 0) {
				t.Errorf("something was written: %d commits, %d znodes", len(s.kafka.Commits()), s.legacy.writeCount())
			}
		})
	}
}
