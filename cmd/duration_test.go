package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 7 * 24 * time.Hour: "7d", 36 * time.Hour: "36h", 90 * time.Minute: "1h30m", 2 * time.Minute: "2m",
		90 * time.Second: "1m30s", time.Hour + 5*time.Second: "1h0m5s", 1500 * time.Millisecond: "1.5s", 10 * time.Millisecond: "10ms",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestDurationsOutsideGo: Kafka's default offsets retention is "7d" in the plan table and the
// text log, a number of seconds in the plan's JSON and the JSON log; "168h0m0s" nowhere.
func TestDurationsOutsideGo(t *testing.T) {
	f := fixture()
	f.kafka.SetRetention(7 * 24 * time.Hour)
	out, errOut, code := run(t, f, "migrate", "plan")
	if code != ExitOK || !strings.Contains(out, "for 7d (offsets.retention.minutes)") || strings.Contains(out+errOut, "168h") {
		t.Errorf("plan table: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = run(t, f, "migrate", "plan", "-o", "json")
	var doc struct {
		SchemaVersion int             `json:"schema_version"`
		Retention     json.RawMessage `json:"offsets_retention"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || string(doc.Retention) != "604800" || doc.SchemaVersion != 2 {
		t.Errorf("plan JSON: exit %d, %v, offsets_retention %s, schema_version %d", code, err, doc.Retention, doc.SchemaVersion)
	}
	_, errOut, code = run(t, f, "migrate", "copy")
	if code != ExitOK || !strings.Contains(errOut, "offsets.retention=7d") {
		t.Errorf("copy's text log: exit %d\n%s", code, errOut)
	}
	_, errOut, code = run(t, f, "migrate", "copy", "--log-format", "json")
	found := false
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["offsets.retention"] != nil {
			found = rec["offsets.retention"] == float64(604800)
		}
	}
	if code != ExitOK || !found {
		t.Errorf("copy's JSON log: exit %d, want offsets.retention 604800\n%s", code, errOut)
	}
}

// TestCopyReadsSchema1Plan: a plan saved by a zk2kafka before schema 2 (offsets_retention
// "168h0m0s") is executed as saved; the previous reader's misreading is not possible: a
// schema 2 file with a string is refused.
func TestCopyReadsSchema1Plan(t *testing.T) {
	f := fixture()
	f.kafka.SetRetention(7 * 24 * time.Hour)
	planFile := savePlan(t, f, t.TempDir())
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	v2 := string(b)
	if !strings.Contains(v2, `"schema_version": 2,`) || !strings.Contains(v2, `"offsets_retention": 604800,`) {
		t.Fatalf("saved plan:\n%s", v2)
	}
	v1 := strings.Replace(strings.Replace(v2, `"schema_version": 2,`, `"schema_version": 1,`, 1), "604800", `"168h0m0s"`, 1)
	if err := os.WriteFile(planFile, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile)
	if code != ExitOK || !strings.Contains(out, "2 would be written") {
		t.Fatalf("copy of a schema 1 plan: exit %d\n%s\n%s", code, out, errOut)
	}
	mixed := strings.Replace(v2, "604800", `"168h0m0s"`, 1)
	if err := os.WriteFile(planFile, []byte(mixed), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile, "--execute"); code != ExitError ||
		!strings.Contains(errOut, "offsets_retention as a string") || len(f.kafka.Commits()) != 0 {
		t.Fatalf("schema 2 plan with a duration string: exit %d, %d commits\n%s", code, len(f.kafka.Commits()), errOut)
	}
}
