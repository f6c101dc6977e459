package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The JSON Schemas of the outputs, published for the scripts that read them, are checked here
// against what the commands really print over the fakes, in as many shapes as the fakes give
// (gated and blocked groups, invalid znodes, written, failed and not restorable partitions,
// every optional field): a field added, renamed or retyped in the code and not in its schema
// fails, and so does a schema that would accept what it should refuse.

// outputSchemas maps each schema file under docs/schemas to a name used below.
var outputSchemas = []string{"plan", "plan-file", "copy", "verify", "export", "restore"}

// loadSchemas compiles every schema, checked against the draft 2020-12 meta-schema (a keyword
// of the wrong type is an error; an unknown one is not, hence the list of optional fields the
// test requires to have been seen), with formats such as date-time asserted.
func loadSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[string]*jsonschema.Schema{}
	for _, name := range outputSchemas {
		path, err := filepath.Abs(filepath.Join("..", "docs", "schemas", name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = c.Compile(path); err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
	}
	return out
}

// schemaCheck validates documents and remembers every key path they held.
type schemaCheck struct {
	t       *testing.T
	schemas map[string]*jsonschema.Schema
	seen    map[string]map[string]bool // schema name -> key paths
	docs    map[string]string          // schema name -> the first document, for the refusal test
}

func (c *schemaCheck) valid(name, what, doc string) {
	c.t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		c.t.Fatalf("%s (%s) is not JSON: %v\n%s", what, name, err, doc)
	}
	if err := c.schemas[name].Validate(inst); err != nil {
		c.t.Errorf("%s does not match docs/schemas/%s.schema.json: %#v\n%s", what, name, err, doc)
	}
	if c.seen[name] == nil {
		c.seen[name] = map[string]bool{}
		c.docs[name] = doc
	}
	keyPaths(inst, "", c.seen[name])
}

// keyPaths collects the object keys of v as dotted paths, array elements as [].
func keyPaths(v any, at string, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[at+"."+k] = true
			keyPaths(e, at+"."+k, into)
		}
	case []any:
		for _, e := range x {
			keyPaths(e, at+"[]", into)
		}
	}
}

// schemaFixture is the command tests' fixture plus what makes every optional field appear: the
// broker's offsets retention, a group with live legacy consumers (g3), an active Kafka group
// (g4), an invalid znode and a missing topic (g5).
func schemaFixture() writableStores {
	s := writableFixture()
	s.kafka.SetRetention(7 * 24 * time.Hour)
	s.legacy.SetGroup(migrate.LegacyGroup{Group: "g3", LiveConsumers: []string{"ids/c-1"},
		Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 7, Path: "/consumers/g3/offsets/t/0", Mtime: time.Unix(1700000000, 0).UTC()}}})
	s.legacy.SetOffset("g4", "t", 0, 8)
	s.kafka.SetGroup("g4", "Stable", 2)
	s.legacy.SetGroup(migrate.LegacyGroup{Group: "g5", Offsets: []migrate.LegacyOffset{
		{Topic: "t", Partition: 0, Path: "/consumers/g5/offsets/t/0", Invalid: `data "-1" is not an offset`},
		{Topic: "gone", Partition: 0, Offset: 3, Path: "/consumers/g5/offsets/gone/0"},
	}})
	return s
}

func TestOutputsMatchTheirSchemas(t *testing.T) {
	c := &schemaCheck{t: t, schemas: loadSchemas(t), seen: map[string]map[string]bool{}, docs: map[string]string{}}
	dir := t.TempDir()
	run := func(s writableStores, wantCode int, args ...string) string {
		t.Helper()
		out, errOut, code := runWith(t, s, nil, args...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, errOut)
		}
		return out
	}
	file := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// plan, and the plan file: a safe plan, and one with every gate and blocked class.
	s := writableFixture()
	safePlan := filepath.Join(dir, "safe.json")
	c.valid("plan", "plan -o json", run(s, ExitOK, "migrate", "plan", "-o", "json", "--out", safePlan))
	c.valid("plan-file", "plan --out", file(safePlan))
	rich := schemaFixture()
	rich.kafka.SetClusterID("cluster-A") // and a cluster fully known
	richPlan := filepath.Join(dir, "rich.json")
	c.valid("plan", "plan -o json of gated and blocked groups", run(rich, ExitUnsafe, "--zk", "zk1:2181,zk2:2181/kafka", "migrate", "plan", "-o", "json", "--out", richPlan,
		"--group-regex", "^g", "--topic-regex", ".", "--exclude-group-regex", "^x", "--group", "g1"))
	c.valid("plan-file", "plan --out of gated and blocked groups", file(richPlan))

	// copy: a dry run, a write, a re-run with nothing to write, a blocked plan, a failed commit.
	c.valid("copy", "copy dry run", run(s, ExitOK, "migrate", "copy", "-o", "json", "--plan", safePlan))
	c.valid("copy", "copy --execute", run(s, ExitOK, "migrate", "copy", "-o", "json", "--plan", safePlan, "--execute", "--backup", filepath.Join(dir, "b1")))
	c.valid("copy", "copy with nothing to write", run(s, ExitOK, "migrate", "copy", "-o", "json"))
	c.valid("copy", "copy of a blocked plan", run(rich, ExitUnsafe, "migrate", "copy", "-o", "json"))
	failing := writableFixture()
	failing.kafka.FailCommits(errBoom)
	c.valid("copy", "copy whose commit fails", run(failing, ExitError, "migrate", "copy", "-o", "json", "--execute", "--backup", filepath.Join(dir, "b2")))

	// verify: stores that agree (marked), disagree, under a lead limit, with invalid znodes and
	// a Kafka commit outside the log.
	c.valid("verify", "verify --mark of agreeing stores", run(s, ExitOK, "migrate", "verify", "-o", "json", "--mark", "--group", "g2"))
	c.valid("verify", "verify of disagreeing stores", run(writableFixture(), ExitUnsafe, "migrate", "verify", "-o", "json", "--max-kafka-lead", "5"))
	rich.kafka.SetCommitted("g1", "t", 0, 500)
	rich.kafka.SetCommitted("g1", "u", 0, 1)
	c.valid("verify", "verify --strict of gated and invalid groups", run(rich, ExitUnsafe, "migrate", "verify", "-o", "json", "--strict"))

	// export from both stores, with invalid znodes and a selection.
	c.valid("export", "export --from zk", run(rich, ExitUnsafe, "export"))
	c.valid("export", "export --from kafka", run(rich, ExitOK, "export", "--from", "kafka", "--group-regex", "^g1$"))

	// restore: a dry run, a write, a backup with a partition not restorable, a ZooKeeper target
	// over an invalid znode, gated groups.
	exp := filepath.Join(dir, "zk.json")
	run(s, ExitOK, "export", "--file", exp)
	c.valid("restore", "restore dry run", run(s, ExitOK, "restore", "-o", "json", "--to", "kafka", "--file", exp))
	backup := filepath.Join(dir, "restore-backup.jsonl")
	w := writableFixture()
	c.valid("restore", "restore --execute", run(w, ExitOK, "restore", "-o", "json", "--to", "kafka", "--file", exp, "--execute", "--backup", backup))
	c.valid("restore", "restore of a backup", run(w, ExitUnsafe, "restore", "-o", "json", "--to", "kafka", "--file", backup))
	csv := writeFile(t, "r.csv", "g5,t,0,4\ng3,t,0,9\ng4,t,0,9\n")
	c.valid("restore", "restore --to zk over an invalid znode", run(rich, ExitUnsafe, "restore", "-o", "json", "--to", "zk", "--file", csv))
	c.valid("restore", "restore --to kafka of gated groups", run(rich, ExitUnsafe, "restore", "-o", "json", "--to", "kafka", "--file", csv))

	// Under a group map: the map in the filter, each renamed group's kafka_group.
	m := writableFixture()
	mappedPlan := filepath.Join(dir, "mapped.json")
	c.valid("plan", "plan -o json under a group map", run(m, ExitOK, "migrate", "plan", "-o", "json", "--out", mappedPlan, "--group-map", "g1=k1"))
	c.valid("plan-file", "plan --out under a group map", file(mappedPlan))
	c.valid("copy", "copy under a group map", run(m, ExitOK, "migrate", "copy", "-o", "json", "--plan", mappedPlan))
	c.valid("verify", "verify under a group map", run(m, ExitUnsafe, "migrate", "verify", "-o", "json", "--group-map", "g1=k1"))
	m.kafka.SetCommitted("k1", "t", 0, 5)
	c.valid("export", "export --from kafka under a group map", run(m, ExitOK, "export", "--from", "kafka", "--group-map", "g1=k1"))
	c.valid("restore", "restore under a group map", run(m, ExitOK, "restore", "-o", "json", "--to", "kafka", "--file", exp, "--group-map", "g1=k1"))

	// Every optional field appeared in some output above: a schema property no output has is
	// not checked by this test.
	for name, paths := range map[string][]string{
		"plan": {".offsets_retention", ".filter.groups", ".filter.group_regex", ".filter.topic_regex", ".filter.exclude_group_regex",
			".groups[].live_legacy_consumers", ".groups[].gates", ".groups[].entries[].log_start",
			".cluster.kafka_cluster_id", ".cluster.zookeeper_servers", ".cluster.zookeeper_chroot",
			".filter.group_map", ".filter.group_map[].legacy", ".filter.group_map[].kafka", ".groups[].kafka_group"},
		"plan-file": {".cluster.kafka_cluster_id", ".cluster.zookeeper_servers", ".cluster.zookeeper_chroot", ".filter.group_map", ".groups[].kafka_group"},
		"copy":      {".result.groups[].partitions[].read_back", ".result.groups[].partitions[].reason", ".result.groups[].kafka_group"},
		"verify":    {".groups[].kafka_group", ".options.max_kafka_lead", ".groups[].live_legacy_consumers", ".groups[].marked", ".groups[].partitions[].zk_mtime", ".groups[].partitions[].log_start", ".groups[].partitions[].znode"},
		"export":    {".invalid", ".offsets[].znode", ".offsets[].mtime", ".offsets[].kafka_group", ".filter.group_map"},
		"restore":   {".restore.groups[].kafka_group", ".backup", ".restore.source", ".restore.groups[].kafka_state", ".restore.groups[].kafka_members", ".restore.groups[].live_legacy_consumers", ".restore.groups[].gates", ".restore.groups[].partitions[].current_invalid", ".restore.groups[].partitions[].current_znode", ".restore.groups[].partitions[].reason", ".restore.groups[].partitions[].read_back"},
	} {
		for _, p := range paths {
			if !c.seen[name][p] {
				var have []string
				for k := range c.seen[name] {
					have = append(have, k)
				}
				slices.Sort(have)
				t.Errorf("no %s output had %s; it had:\n  %s", name, p, strings.Join(have, "\n  "))
			}
		}
	}
	t.Run("refusals", func(t *testing.T) { testSchemasRefuse(t, c) })
}

// testSchemasRefuse: each schema is strict: an unknown key, a missing required key, a wrong
// type and, in the plan, a duration as Go wrote it before schema 2 are all refused.
func testSchemasRefuse(t *testing.T, c *schemaCheck) {
	edits := map[string]func(map[string]any){
		"unknown key":         func(m map[string]any) { m["comment"] = "reviewed" },
		"no schema_version":   func(m map[string]any) { delete(m, "schema_version") },
		"older schema":        func(m map[string]any) { m["schema_version"] = 0 },
		"schema_version text": func(m map[string]any) { m["schema_version"] = "1" },
	}
	for _, name := range outputSchemas {
		for what, edit := range edits {
			var m map[string]any
			if err := json.Unmarshal([]byte(c.docs[name]), &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			refused(t, c, name, what, m)
		}
	}
	deep := map[string]func(map[string]any){
		"plan: retention as Go wrote it": func(m map[string]any) { m["offsets_retention"] = "168h0m0s" },
		"plan: unknown entry key": func(m map[string]any) {
			m["groups"].([]any)[0].(map[string]any)["entries"].([]any)[0].(map[string]any)["note"] = 1
		},
		"plan: unknown class": func(m map[string]any) {
			m["groups"].([]any)[0].(map[string]any)["entries"].([]any)[0].(map[string]any)["class"] = "ahead"
		},
		"plan: a class missing from the summary": func(m map[string]any) { delete(m["summary"].(map[string]any)["by_class"].(map[string]any), "equal") },
		"plan-file: a summary":                   func(m map[string]any) { m["summary"] = map[string]any{} },
		"plan-file: no fingerprint":              func(m map[string]any) { delete(m, "fingerprint") },
		"copy: an unknown status count":          func(m map[string]any) { m["counts"].(map[string]any)["done"] = 1 },
		"verify: a bad time":                     func(m map[string]any) { m["checked_at"] = "yesterday" },
		"verify: no reason": func(m map[string]any) {
			delete(m["groups"].([]any)[0].(map[string]any)["partitions"].([]any)[0].(map[string]any), "reason")
		},
		"export: a negative offset":  func(m map[string]any) { m["offsets"].([]any)[0].(map[string]any)["offset"] = -1 },
		"restore: an unknown target": func(m map[string]any) { m["restore"].(map[string]any)["target"] = "s3" },
	}
	for what, edit := range deep {
		name, _, _ := strings.Cut(what, ":")
		var m map[string]any
		if err := json.Unmarshal([]byte(c.docs[name]), &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		refused(t, c, name, what, m)
	}
}

func refused(t *testing.T, c *schemaCheck, name, what string, m map[string]any) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if c.schemas[name].Validate(inst) == nil {
		t.Errorf("%s schema accepted a document with %s", name, what)
	}
}
