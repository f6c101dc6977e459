package planfile_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// TestPlanRetentionInSeconds: a plan writes offsets_retention as a number of seconds (schema 2),
// never as Go's "168h0m0s", and reads it back.
func TestPlanRetentionInSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{7 * 24 * time.Hour, `"offsets_retention": 604800,`},
		{1500 * time.Millisecond, `"offsets_retention": 1.5,`},
	} {
		p := basePlan(t)
		p.Retention = migrate.Duration(tc.d)
		b := encode(t, p)
		if !bytes.Contains(b, []byte(tc.want)) || !bytes.Contains(b, []byte(`"schema_version": 2,`)) {
			t.Fatalf("%v: the plan lacks %s and schema_version 2:\n%s", tc.d, tc.want, b)
		}
		back, err := migratetest.DecodePlan(bytes.NewReader(b))
		if err != nil || time.Duration(back.Retention) != tc.d {
			t.Fatalf("%v: read back %v, %v", tc.d, time.Duration(back.Retention), err)
		}
	}
}

// TestPlanSchema1StillRead: a plan file saved before schema 2 (offsets_retention a duration
// string) is read as the same plan, whatever the order of its keys; a file mixing the two
// schemas is refused, never misread.
func TestPlanSchema1StillRead(t *testing.T) {
	p := basePlan(t)
	p.Retention = migrate.Duration(7 * 24 * time.Hour)
	v2 := string(encode(t, p))
	v1 := strings.Replace(strings.Replace(v2, `"schema_version": 2,`, `"schema_version": 1,`, 1), `604800`, `"168h0m0s"`, 1)
	var m map[string]any
	if err := json.Unmarshal([]byte(v1), &m); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.Marshal(m) // jq -S: schema_version after offsets_retention
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"as written": v1, "keys sorted": string(sorted)} {
		back, err := migratetest.DecodePlan(strings.NewReader(text))
		if err != nil || back.SchemaVersion != migrate.PlanSchemaVersion || time.Duration(back.Retention) != 7*24*time.Hour ||
			back.Fingerprint != p.Fingerprint || len(back.Groups) != 1 || len(back.Groups[0].Entries) != 5 {
			t.Fatalf("%s: schema 1 plan read as %+v, %v", name, back, err)
		}
		head, err := planfile.ReadHead(strings.NewReader(text))
		if err != nil || head.SchemaVersion != migrate.PlanSchemaVersion {
			t.Fatalf("%s: head %+v, %v", name, head, err)
		}
	}
	// Without a retention (zero, left out), schema 1 and 2 are the same text but the version.
	noRet := basePlan(t)
	if _, err := migratetest.DecodePlan(strings.NewReader(strings.Replace(string(encode(t, noRet)), `"schema_version": 2,`, `"schema_version": 1,`, 1))); err != nil {
		t.Fatalf("schema 1 without retention: %v", err)
	}

	cases := []struct{ name, text, want string }{
		{"schema 1 with seconds", strings.Replace(v2, `"schema_version": 2,`, `"schema_version": 1,`, 1), "schema 1 wrote a duration string"},
		{"schema 2 with a string", strings.Replace(v2, `604800`, `"168h0m0s"`, 1), "is a number of seconds since schema 2"},
		{"schema 3", strings.Replace(v2, `"schema_version": 2,`, `"schema_version": 3,`, 1), "schema_version 3 is not supported"},
		{"null", strings.Replace(v2, `604800`, `null`, 1), "expected a number of seconds"},
		{"boolean", strings.Replace(v2, `604800`, `true`, 1), "expected a number of seconds"},
		{"beyond a duration", strings.Replace(v2, `604800`, `1e300`, 1), "out of range"},
		{"negative", strings.Replace(v2, `604800`, `-1`, 1), "is negative"},
		{"bad string in schema 1", strings.Replace(v1, `"168h0m0s"`, `"a week"`, 1), "a week"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRejected(t, []byte(tc.text), tc.want) })
	}
}
