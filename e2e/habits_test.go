package e2e_test

import (
	"context"
	encodingcsv "encoding/csv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// TestKafkaToolHabits: the habits of Kafka's own consumer-groups tool, on the real stack. Its
// --reset-offsets --dry-run --export file for one group (topic,partition,offset lines) is
// restored with that --group, and the tool then describes the group at those offsets; without
// --group the file is refused; --dry-run writes nothing, and with --execute is an error. The
// broker's offsets retention is seconds in the plan's JSON. Every JSON output on the way matches
// its schema under docs/schemas.
func TestKafkaToolHabits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schemas := compileSchemas(t)
	topic := e.topic(20, 20)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 5, 1: 7})

	plan := e.mustCLI(0, "migrate", "plan", "-o", "json")
	schemas.check(t, "plan", plan.stdout)
	if d := decodeJSON[planDoc](t, plan); time.Duration(d.Retention) != 7*24*time.Hour || !strings.Contains(plan.stdout, `"offsets_retention": 604800,`) {
		t.Errorf("plan's offsets_retention %v, want 604800 seconds (the broker default)\n%s", time.Duration(d.Retention), plan.stdout)
	}
	if r := e.mustCLI(0, "migrate", "plan"); !strings.Contains(r.stdout, "for 7d (offsets.retention.minutes)") {
		t.Errorf("plan table:\n%s", r)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := e.st.KafkaTool(ctx, stacktest.ConsumerGroupClass, "--bootstrap-server", e.st.Kafka, "--reset-offsets",
		"--group", g, "--topic", topic, "--to-offset", "9", "--dry-run", "--export", "--timeout", "60000")
	if err != nil {
		t.Fatal(err)
	}
	// The lines of the file, as an operator saves them: Kafka 4's tool may print a log4j2
	// status line on stdout before them.
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, topic) {
			lines = append(lines, l)
		}
	}
	csv := strings.Join(lines, "\n") + "\n"
	// Read as CSV: the tool (Jackson's CSV writer) quotes a name with a '-' in it, and lists the
	// partitions in no fixed order.
	recs, err := encodingcsv.NewReader(strings.NewReader(csv)).ReadAll()
	slices.SortFunc(recs, func(a, b []string) int { return slices.Compare(a, b) })
	if want := [][]string{{topic, "0", "9"}, {topic, "1", "9"}}; err != nil || !slices.EqualFunc(recs, want, slices.Equal) {
		t.Fatalf("the tool's single-group export is %q (%v), want the lines %q", csv, err, want)
	}
	file := writeText(t, e.file("reset")+".csv", csv)

	if r := e.mustCLI(1, "restore", "--to", "kafka", "--file", file); !strings.Contains(r.stderr, "add --group <name>") {
		t.Errorf("3 columns without --group:\n%s", r)
	}
	if r := e.mustCLI(1, "restore", "--to", "kafka", "--group", g, "--file", file, "--dry-run", "--execute"); !strings.Contains(r.stderr, "--dry-run and --execute together") {
		t.Errorf("--dry-run --execute:\n%s", r)
	}
	dry := e.mustCLI(0, "restore", "--to", "kafka", "--group", g, "--file", file, "--dry-run", "-o", "json")
	schemas.check(t, "restore", dry.stdout)
	if d := decodeJSON[restoreDoc](t, dry); d.Counts[copier.StatusWouldWrite] != 2 || len(e.offsets(g)) != 0 {
		t.Fatalf("dry run: %+v, kafka %v", d.Counts, e.offsets(g))
	}
	done := e.mustCLI(0, "restore", "--to", "kafka", "--group", g, "--file", file, "--execute", "--backup", e.file("b"), "-o", "json")
	schemas.check(t, "restore", done.stdout)
	if got, w := e.st.DescribeOffsets(t, g), want(topic, map[int32]int64{0: 9, 1: 9}); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --describe %s: %v, want %v", g, got, w)
	}
	// Everything already restored: no table at all, one count line.
	if r := e.mustCLI(0, "restore", "--to", "kafka", "--group", g, "--file", file); !strings.Contains(r.stdout, "2 partition(s) unchanged") ||
		strings.Contains(r.stdout, "│") {
		t.Errorf("re-run lists unchanged partitions:\n%s", r)
	}

	schemas.check(t, "verify", e.mustCLI(0, "migrate", "verify", "-o", "json").stdout)
	schemas.check(t, "copy", e.mustCLI(0, "migrate", "copy", "-o", "json").stdout)
	schemas.check(t, "export", e.mustCLI(0, "export", "--from", "kafka").stdout)
}

func writeText(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type schemaSet map[string]*jsonschema.Schema

func compileSchemas(t *testing.T) schemaSet {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	set := schemaSet{}
	for _, name := range []string{"plan", "copy", "verify", "export", "restore"} {
		sch, err := c.Compile(filepath.Join(stacktest.RepoRoot(), "docs", "schemas", name+".schema.json"))
		if err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		set[name] = sch
	}
	return set
}

func (s schemaSet) check(t *testing.T, name, doc string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err == nil {
		err = s[name].Validate(inst)
	}
	if err != nil {
		t.Errorf("%s output does not match docs/schemas/%s.schema.json: %#v\n%s", name, name, err, doc)
	}
}
