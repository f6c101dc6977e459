package planfile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

func basePlan(t *testing.T) migrate.Plan {
	t.Helper()
	in := migratetest.GateInputs(nil, "Empty", 0)
	in.Filter = migrate.FilterSpec{Groups: []string{"g"}, TopicRegex: "^t$"}
	in.Legacy[0].Offsets[0].Mtime = migratetest.Now.Add(-3600e9)
	return migratetest.MustBuild(t, in, migrate.DefaultPolicy())
}

func TestPlanFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte("old plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := basePlan(t)
	if err := migratetest.WritePlanFile(path, p); err != nil {
		t.Fatalf("WritePlanFile: %v", err)
	}
	back, err := migratetest.ReadPlanFile(path)
	if err != nil {
		t.Fatalf("ReadPlanFile: %v", err)
	}
	if !reflect.DeepEqual(migratetest.Normalize(back), migratetest.Normalize(p)) {
		t.Fatalf("round trip changed the plan:\n got %+v\nwant %+v", back, p)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("plan file mode %v, want 0644", fi.Mode().Perm())
	}
	assertOnlyFile(t, dir, "plan.json")
}

func TestWritePlanFileRefusesInvalidPlanAndKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte("old plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := basePlan(t)
	p.Groups[0].Entries[0].ZK = nil // a write without an offset
	err := migratetest.WritePlanFile(path, p)
	if err == nil || !strings.Contains(err.Error(), `group "g" topic "t" partition 0`) {
		t.Fatalf("WritePlanFile error = %v, want one naming the entry", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old plan" {
		t.Fatalf("old file changed: %q, %v", b, err)
	}
	assertOnlyFile(t, dir, "plan.json")
}

func TestWritePlanFileErrors(t *testing.T) {
	dir := t.TempDir()
	if err := migratetest.WritePlanFile(filepath.Join(dir, "missing", "plan.json"), basePlan(t)); err == nil {
		t.Errorf("WritePlanFile into a missing directory: no error")
	}
	// Renaming over a directory fails after the temporary file is written: it must be removed.
	target := filepath.Join(dir, "isdir")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := migratetest.WritePlanFile(target, basePlan(t)); err == nil || !strings.Contains(err.Error(), "rename") {
		t.Errorf("WritePlanFile over a directory: error %v, want a rename error", err)
	}
	assertOnlyFile(t, dir, "isdir")
	_, err := migratetest.ReadPlanFile(filepath.Join(dir, "nope.json"))
	if err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("ReadPlanFile of a missing file: %v, want an error naming it", err)
	}
}

func TestReadPlanFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"schema_version": 9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := migratetest.ReadPlanFile(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "schema_version 9") {
		t.Fatalf("ReadPlanFile error = %v, want one naming the file and the version", err)
	}
}

func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want only %s (a temporary file left behind?)", names, name)
	}
}

func encode(t *testing.T, p migrate.Plan) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := migratetest.EncodePlan(&buf, p); err != nil {
		t.Fatalf("EncodePlan: %v", err)
	}
	return buf.Bytes()
}

// TestReadHeadReorderedKeys: ReadHead gives the file's selection and policy whatever
// the order of its top-level keys. It used to stop at the groups once it had the policy, and a
// filter written after them came back empty: copy then planned every group in ZooKeeper.
func TestReadHeadReorderedKeys(t *testing.T) {
	p := basePlan(t)
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := migratetest.WritePlanFile(path, p); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(written, &fields); err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]string{
		{"schema_version", "created_at", "policy", "offsets_retention", "filter", "groups", "fingerprint"}, // as plan writes it
		{"created_at", "filter", "fingerprint", "groups", "offsets_retention", "policy", "schema_version"}, // jq -S
		{"schema_version", "created_at", "policy", "offsets_retention", "groups", "filter", "fingerprint"}, // the filter last
		{"groups", "fingerprint", "filter", "offsets_retention", "policy", "created_at", "schema_version"}, // the head last
	} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			var kv []string
			for _, k := range order {
				if _, ok := fields[k]; !ok && k != "offsets_retention" { // left out when zero
					t.Fatalf("the written plan has no %q", k)
				} else if ok {
					kv = append(kv, fmt.Sprintf("%q:%s", k, fields[k]))
				}
			}
			b := bytes.NewBufferString("{" + strings.Join(kv, ",") + "}")
			head, err := planfile.ReadHead(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(head.Filter, p.Filter) || !reflect.DeepEqual(head.Policy, p.Policy) ||
				head.SchemaVersion != p.SchemaVersion || !head.CreatedAt.Equal(p.CreatedAt) {
				t.Errorf("head: filter %+v policy %+v schema %d created %s; want filter %+v policy %+v schema %d created %s",
					head.Filter, head.Policy, head.SchemaVersion, head.CreatedAt, p.Filter, p.Policy, p.SchemaVersion, p.CreatedAt)
			}
		})
	}
}
