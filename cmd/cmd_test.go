package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// fakeStores hands the commands in-memory stores.
type fakeStores struct {
	legacy *migratetest.LegacyStore
	kafka  *migratetest.KafkaStore
}

func (f fakeStores) OpenLegacy(_ context.Context, g *globalOptions, _ *deps) (*legacy.Source, error) {
	return staticSource(f.legacy, g), nil
}

func (f fakeStores) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	return f.kafka, func() {}, nil
}

// fixture: g1 t/0 zk 10 (Kafka none), t/1 zk 20 (Kafka 30: kafka-ahead), g2 t/0 zk 5.
func fixture() fakeStores {
	l := migratetest.NewLegacyStore()
	l.SetOffset("g1", "t", 0, 10)
	l.SetOffset("g1", "t", 1, 20)
	l.SetOffset("g2", "t", 0, 5)
	k := migratetest.NewKafkaStore()
	k.AddTopic("t", migrate.PartitionRange{LogEnd: 100}, migrate.PartitionRange{LogEnd: 100})
	k.SetCommitted("g1", "t", 1, 30)
	return fakeStores{legacy: l, kafka: k}
}

func run(t *testing.T, stores fakeStores, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	d := defaultDeps(&out, &errb)
	d.stores = stores
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), exitCode(err)
}

func TestPlanOutputsAndExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		mutate   func(fakeStores)
		wantCode int
		wantOut  []string
	}{
		{name: "table", args: []string{"migrate", "plan"}, wantCode: ExitOK,
			wantOut: []string{"zk-only", "kafka-ahead", "3 partition(s): 2 to write, 1 skipped, 0 blocked", "safe to execute"}},
		{name: "csv for kafka-consumer-groups", args: []string{"migrate", "plan", "-o", "csv"}, wantCode: ExitOK,
			wantOut: []string{"g1,t,0,10\ng2,t,0,5\n"}},
		{name: "live legacy consumer blocks: exit 2", args: []string{"migrate", "plan"}, wantCode: ExitUnsafe,
			mutate: func(f fakeStores) {
				f.legacy.SetGroup(migrate.LegacyGroup{Group: "g2", LiveConsumers: []string{"ids/c-1"},
					Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 5, Path: "/consumers/g2/offsets/t/0"}}})
			},
			wantOut: []string{`Group "g2" is gated: legacy-consumers-alive`, "NOT safe"}},
		{name: "out of range blocks under fail", args: []string{"migrate", "plan", "--group", "g2"}, wantCode: ExitUnsafe,
			mutate:  func(f fakeStores) { f.legacy.SetOffset("g2", "t", 0, 500) },
			wantOut: []string{"above-log-end", "block"}},
		{name: "out of range clamped", args: []string{"migrate", "plan", "--group", "g2", "--out-of-range", "clamp", "-o", "csv"}, wantCode: ExitOK,
			mutate:  func(f fakeStores) { f.legacy.SetOffset("g2", "t", 0, 500) },
			wantOut: []string{"g2,t,0,100\n"}},
		{name: "unknown group named", args: []string{"migrate", "plan", "--group", "nope"}, wantCode: ExitError,
			wantOut: []string{}},
		{name: "bad policy", args: []string{"migrate", "plan", "--on-conflict", "newest"}, wantCode: ExitError},
		{name: "bad output", args: []string{"migrate", "plan", "-o", "xml"}, wantCode: ExitError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := fixture()
			if tc.mutate != nil {
				tc.mutate(f)
			}
			out, errOut, code := run(t, f, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if len(f.kafka.Commits()) != 0 {
				t.Errorf("plan wrote %d commits", len(f.kafka.Commits()))
			}
		})
	}
}

func TestPlanJSONSchema(t *testing.T) {
	out, _, code := run(t, fixture(), "migrate", "plan", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		SchemaVersion int             `json:"schema_version"`
		Safe          bool            `json:"safe"`
		Summary       migrate.Summary `json:"summary"`
		Groups        []struct {
			Group   string `json:"group"`
			Entries []struct {
				Class  string `json:"class"`
				Action string `json:"action"`
				Target int64  `json:"target"`
			} `json:"entries"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.SchemaVersion != migrate.PlanSchemaVersion || !doc.Safe || doc.Summary.Partitions != 3 ||
		len(doc.Groups) != 2 || doc.Groups[0].Entries[1].Class != "kafka-ahead" || doc.Groups[0].Entries[1].Action != "skip" {
		t.Fatalf("unexpected document: %+v", doc)
	}
}

// savePlan runs `migrate plan --out` into dir and returns the plan file's path.
func savePlan(t *testing.T, f fakeStores, dir string, more ...string) string {
	t.Helper()
	planFile := filepath.Join(dir, "plan.json")
	if _, errOut, code := run(t, f, append([]string{"migrate", "plan", "--out", planFile}, more...)...); code != ExitOK {
		t.Fatalf("plan exit %d: %s", code, errOut)
	}
	return planFile
}

func TestCopyDryRunThenExecute(t *testing.T) {
	f := fixture()
	dir := t.TempDir()
	planFile := savePlan(t, f, dir)
	out, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile)
	if code != ExitOK || !strings.Contains(out, "2 would be written") || len(f.kafka.Commits()) != 0 {
		t.Fatalf("dry run: exit %d, %d commits\n%s\n%s", code, len(f.kafka.Commits()), out, errOut)
	}
	backup := filepath.Join(dir, "backup.jsonl")
	out, errOut, code = run(t, f, "migrate", "copy", "--plan", planFile, "--execute", "--backup", backup)
	if code != ExitOK || !strings.Contains(out, "2 written and read back") {
		t.Fatalf("execute: exit %d\n%s\n%s", code, out, errOut)
	}
	st, err := f.kafka.Groups(context.Background(), []string{"g1", "g2"})
	if err != nil {
		t.Fatal(err)
	}
	tp := func(p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: "t", Partition: p} }
	if st["g1"].Committed[tp(0)] != 10 || st["g1"].Committed[tp(1)] != 30 || st["g2"].Committed[tp(0)] != 5 {
		t.Fatalf("kafka after copy: %+v", st)
	}
	// The same plan again: resumes, writes nothing, exit 0.
	out, _, code = run(t, f, "migrate", "copy", "--plan", planFile, "--execute", "--backup", filepath.Join(dir, "b2.jsonl"))
	if code != ExitOK || !strings.Contains(out, "2 already equal") {
		t.Fatalf("re-run: exit %d\n%s", code, out)
	}
	// An existing backup file is never overwritten.
	if _, errOut, code = run(t, f, "migrate", "copy", "--plan", planFile, "--execute", "--backup", backup); code != ExitError ||
		!strings.Contains(errOut, "nothing was written") {
		t.Fatalf("reused backup path: exit %d: %s", code, errOut)
	}
}

func TestCopyRefusesDrift(t *testing.T) {
	f := fixture()
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if _, errOut, code := run(t, f, "migrate", "plan", "--out", planFile); code != ExitOK {
		t.Fatalf("plan exit %d: %s", code, errOut)
	}
	f.legacy.SetOffset("g1", "t", 0, 11)
	_, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile, "--execute", "--backup", filepath.Join(t.TempDir(), "b"))
	if code != ExitUnsafe || !strings.Contains(errOut, `group "g1" t/0: ZooKeeper offset 11, planned 10`) || len(f.kafka.Commits()) != 0 {
		t.Fatalf("drift: exit %d, %d commits: %s", code, len(f.kafka.Commits()), errOut)
	}
	out, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile, "--replan", "--execute", "--backup", filepath.Join(t.TempDir(), "b"))
	if code != ExitOK || !strings.Contains(out, "2 written") {
		t.Fatalf("--replan: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestCopyRejectsBadFlags(t *testing.T) {
	cases := [][]string{
		{"migrate", "copy", "--plan", "p.json", "--group", "g1"},
		{"migrate", "copy", "--replan"},
		{"migrate", "copy", "--plan", "/nonexistent/plan.json"},
		{"migrate", "copy", "--batch-groups", "0"},
	}
	for _, args := range cases {
		f := fixture()
		if _, errOut, code := run(t, f, args...); code != ExitError || errOut == "" || len(f.kafka.Commits()) != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestMissingConnectionSettingsNameTheFix(t *testing.T) {
	var out, errb bytes.Buffer
	code := Execute(context.Background(), []string{"migrate", "plan"}, &out, &errb)
	if code != ExitError || !strings.Contains(errb.String(), "--zk host:port") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
