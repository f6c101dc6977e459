package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

func sampleExport() Document {
	legacy := []migrate.LegacyGroup{
		{Group: "g2", Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 7, Path: "/consumers/g2/offsets/t/0",
			Mtime: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}}},
		{Group: "g1", Offsets: []migrate.LegacyOffset{
			{Topic: "t", Partition: 1, Offset: 20, Path: "/consumers/g1/offsets/t/1"},
			{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g1/offsets/t/0"},
			{Topic: "t", Partition: 2, Path: "/consumers/g1/offsets/t/2", Invalid: "empty offset data"},
		}},
	}
	return FromLegacy(legacy, migrate.FilterSpec{GroupRegex: "^g"}, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), 0)
}

// TestRoundTrip writes the export as JSON and as CSV and reads both back: nothing is lost,
// nothing is added, invalid znodes stay out of the offsets.
func TestRoundTrip(t *testing.T) {
	e := sampleExport()
	if len(e.Offsets) != 3 || len(e.Invalid) != 1 || e.Offsets[0].Group != "g1" || e.Offsets[2].Group != "g2" {
		t.Fatalf("export: %+v", e)
	}
	for _, tc := range []struct {
		name   string
		write  func(*bytes.Buffer) error
		format Format
		source Source
	}{
		{"json", func(b *bytes.Buffer) error { return WriteJSON(b, e) }, FormatJSON, SourceZK},
		{"csv", func(b *bytes.Buffer) error { return WriteCSV(b, e) }, FormatCSV, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			f, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if f.Format != tc.format || f.Source != tc.source || len(f.Entries) != len(e.Offsets) {
				t.Fatalf("parsed %+v", f)
			}
			for i, en := range f.Entries {
				o := e.Offsets[i]
				if en.Group != o.Group || en.Topic != o.Topic || en.Partition != o.Partition || *en.Offset != o.Offset || en.Expect != nil {
					t.Errorf("entry %d: %+v, want %+v", i, en, o)
				}
			}
			if tc.format == FormatJSON && !f.Entries[2].Mtime.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
				t.Errorf("mtime lost: %v", f.Entries[2].Mtime)
			}
		})
	}
}

func TestParseBackup(t *testing.T) {
	body := `{"zk2kafka_backup":1,"created_at":"2025-01-01T00:00:00Z","plan_fingerprint":"abc"}
{"group":"g","topic":"t","partition":0,"kafka_before":5,"target":9}
{"group":"g","topic":"t","partition":1,"kafka_before":null,"target":3}
`
	f, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != FormatBackup || f.Source != SourceKafka || len(f.Entries) != 2 {
		t.Fatalf("%+v", f)
	}
	a, b := f.Entries[0], f.Entries[1]
	if *a.Offset != 5 || *a.Expect != 9 || a.Line != 2 || b.Offset != nil || *b.Expect != 3 || b.Line != 3 {
		t.Errorf("entries %+v %+v", a, b)
	}
}

const header = `{"zk2kafka_backup":1,"created_at":"2025-01-01T00:00:00Z","plan_fingerprint":"abc"}` + "\n"

func exportDoc(offsets string) string {
	return "{\n  \"schema_version\": 1,\n  \"source\": \"zk\",\n  \"exported_at\": \"2025-01-01T00:00:00Z\",\n  \"offsets\": [\n" + offsets + "\n  ]\n}\n"
}

// exportHead is an empty export document without its closing brace, for the keys a case adds.
const exportHead = `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":[]`

func TestParseRejects(t *testing.T) {
	good := `{"group":"g","topic":"t","partition":0,"offset":1}`
	cases := []struct{ name, body, want string }{
		{"empty", "  \n", "the file is empty"},
		{"csv three fields", "t,0,5\n", "line 1: 3 fields (topic,partition,offset)"},
		{"csv five fields", "g,t,0,5\ng,t,1,5,x\n", "line 2: 5 fields"},
		{"csv negative offset", "g,t,0,-1\n", "line 1: offset \"-1\": negative"},
		{"csv spaces", "g,t,0, 5\n", `offset " 5": not a non-negative decimal number`},
		{"csv partition too large", "g,t,2147483648,5\n", "partition \"2147483648\": too large"},
		{"csv header not first", "g,t,0,5\ngroup,topic,partition,offset\n", "line 2: partition \"partition\""},
		{"csv empty group", ",t,0,5\n", "line 1: empty group name"},
		{"csv duplicate", "g,t,0,5\ng,t,1,5\ng,t,0,6\n", "line 3: group \"g\" topic \"t\" partition 0 is already given on line 1"},
		{"csv bad quote", "g,\"t,0,5\n", "not valid CSV"},
		{"json wrong version", `{"schema_version":2,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":[],"new":1}`, "schema_version 2"},
		{"json unknown key", `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":[],"extra":1}`, `unknown key "extra"`},
		{"json duplicate key", `{"schema_version":1,"source":"zk","source":"kafka","exported_at":"2025-01-01T00:00:00Z","offsets":[]}`, `key "source" given twice`},
		{"json missing offsets", `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z"}`, `missing key "offsets"`},
		{"json bad source", `{"schema_version":1,"source":"s3","exported_at":"2025-01-01T00:00:00Z","offsets":[]}`, `source: "s3", expected zk or kafka`},
		{"json trailing data", `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":[]} {}`, "data after the JSON object"},
		{"json offset line", exportDoc("    " + good + ",\n    {\"group\":\"g\",\"topic\":\"t\",\"partition\":1}"), `line 7: offsets[1]: missing key "offset"`},
		{"json case-folded key", exportDoc(`    {"group":"g","topic":"t","partition":0,"Offset":1}`), `line 6: offsets[0]: unknown key "Offset"`},
		{"json repeated key in offset", exportDoc(`    {"group":"g","topic":"t","partition":0,"offset":1,"offset":2}`), `key "offset" given twice`},
		{"json fractional offset", exportDoc(`    {"group":"g","topic":"t","partition":0,"offset":1.5}`), "line 6: offsets[0]"},
		{"json string offset", exportDoc(`    {"group":"g","topic":"t","partition":0,"offset":"1"}`), "line 6: offsets[0]"},
		{"json negative", exportDoc(`    {"group":"g","topic":"t","partition":0,"offset":-3}`), "line 6: offset -3 is negative"},
		{"json control character in topic", exportDoc(`    {"group":"g","topic":"a\u0001b","partition":0,"offset":3}`), `topic name "a\x01b" contains a control character`},
		{"json duplicate", exportDoc("    " + good + ",\n    " + good), "line 7: group \"g\" topic \"t\" partition 0 is already given on line 6"},
		{"json offsets null", `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":null}`, `key "offsets" is null`},
		{"json offsets not array", `{"schema_version":1,"source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":{}}`, "offsets: expected an array"},
		{"json null offset", exportDoc(`    {"group":"g","topic":"t","partition":3,"offset":null}`), `line 6: offsets[0]: key "offset" is null`},
		{"json null partition", exportDoc(`    {"group":"g","topic":"t","partition":null,"offset":42}`), `line 6: offsets[0]: key "partition" is null`},
		{"json null group", exportDoc(`    {"group":null,"topic":"t","partition":0,"offset":42}`), `key "group" is null`},
		{"json schema_version not a number", `{"schema_version":"1","source":"zk","exported_at":"2025-01-01T00:00:00Z","offsets":[]}`, "line 1: schema_version: json: cannot unmarshal string"},
		{"json source not a string", `{"schema_version":1,"source":7,"exported_at":"2025-01-01T00:00:00Z","offsets":[]}`, "line 1: source: json: cannot unmarshal number"},
		{"json bad exported_at", `{"schema_version":1,"source":"zk","exported_at":"yesterday","offsets":[]}`, `exported_at: parsing time "yesterday"`},
		{"json fractional offset_adjust", exportHead + `,"offset_adjust":1.5}`, "offset_adjust: json: cannot unmarshal number 1.5"},
		{"json unknown filter key", exportHead + `,"filter":{"group_rx":"x"}}`, `filter: unknown key "group_rx"`},
		{"json filter group map twice", exportHead + `,"filter":{"group_map":[{"legacy":"a","kafka":"b"},{"legacy":"a","kafka":"c"}]}}`, `filter: group_map: legacy group "a" after "a"`},
		{"json invalid entry unknown key", exportHead + `,"invalid":[{"group":"g","topic":"t","partition":0,"znode":"/z","reason":"r","x":1}]}`, `invalid: [0]: unknown key "x"`},
		{"json invalid not a list", exportHead + `,"invalid":{}}`, "invalid: json: cannot unmarshal object"},
		{"json kafka_group in a zk export", exportDoc(`    {"group":"g","kafka_group":"k","topic":"t","partition":0,"offset":1}`), "kafka_group in an export of zk"},
		{"backup wrong version", `{"zk2kafka_backup":9}` + "\n", "backup format 9"},
		{"backup missing field", header + `{"group":"g","topic":"t","partition":0,"target":9}` + "\n", `line 2: backup record: missing key "kafka_before"`},
		{"backup empty line", header + "\n" + `{"group":"g","topic":"t","partition":0,"kafka_before":1,"target":9}` + "\n", "line 2: empty line"},
		{"backup torn last line", header + `{"group":"g","topic":"t","partition":0,"kafka_before":1,"target":9}` + "\n" + `{"group":"g","top`, "line 3: the last line is not a complete record"},
		{"backup null target", header + `{"group":"g","topic":"t","partition":3,"kafka_before":7,"target":null}` + "\n", `line 2: backup record: key "target" is null`},
		{"backup null partition", header + `{"group":"g","topic":"t","partition":null,"kafka_before":7,"target":9}` + "\n", `line 2: backup record: key "partition" is null`},
		{"backup negative target", header + `{"group":"g","topic":"t","partition":0,"kafka_before":1,"target":-9}` + "\n", "line 2: target -9 is negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if len(f.Entries) != 0 {
				t.Errorf("a bad file returned %d entries", len(f.Entries))
			}
		})
	}
}

func TestParseListsManyProblems(t *testing.T) {
	var b strings.Builder
	for range 30 {
		b.WriteString("g,t,x,1\n")
	}
	_, err := Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "30 problems") || !strings.Contains(err.Error(), "... and 10 more") ||
		!strings.Contains(err.Error(), "line 20:") || strings.Contains(err.Error(), "line 21:") {
		t.Fatalf("error %v", err)
	}
}

func TestParseCSVHeader(t *testing.T) {
	f, err := Parse([]byte("group,topic,partition,offset\ng,t,0,5\n"))
	if err != nil || len(f.Entries) != 1 || f.Entries[0].Line != 2 {
		t.Fatalf("%+v %v", f, err)
	}
}

// TestParseSingleGroupCSV: topic,partition,offset lines, the consumer-groups tool's form with
// one --group, are that group's offsets; without exactly one group they are refused, saying
// what to add; one file holds one form.
func TestParseSingleGroupCSV(t *testing.T) {
	f, err := ParseFor([]byte("topic,partition,offset\nt,0,5\nu,1,7\n"), []string{"g"})
	if err != nil || len(f.Entries) != 2 || f.Format != FormatCSV {
		t.Fatalf("%+v %v", f, err)
	}
	if e := f.Entries[1]; e.Group != "g" || e.Topic != "u" || e.Partition != 1 || *e.Offset != 7 || e.Line != 3 {
		t.Errorf("entry %+v", e)
	}
	// The group form is read as before with one group selected: the lines name their groups.
	f, err = ParseFor([]byte("g,t,0,5\nh,t,0,6\n"), []string{"g"})
	if err != nil || len(f.Entries) != 2 || f.Entries[1].Group != "h" {
		t.Fatalf("group form with one group: %+v %v", f, err)
	}
	cases := []struct {
		name, body string
		groups     []string
		want       string
	}{
		{"no group", "t,0,5\n", nil, "line 1: 3 fields (topic,partition,offset): the consumer-groups tool's form for one group: add --group <name>"},
		{"two groups", "t,0,5\n", []string{"a", "b"}, "2 groups are selected (--group a,b): give exactly one --group"},
		{"header, no group", "topic,partition,offset\nt,0,5\n", nil, "line 2: 3 fields"},
		{"group line in a single-group file", "t,0,5\ng,t,1,5\n", []string{"g"}, "line 2: 4 fields, expected topic,partition,offset as on line 1"},
		{"single-group line in a group file", "g,t,0,5\nt,1,5\n", []string{"g"}, "line 2: 3 fields, expected group,topic,partition,offset as on line 1"},
		{"two fields", "t,0\n", []string{"g"}, "line 1: 2 fields, expected group,topic,partition,offset (or topic,partition,offset with one --group)"},
		{"bad offset", "t,0,x\n", []string{"g"}, `line 1: offset "x"`},
		{"duplicate", "t,0,5\nt,0,6\n", []string{"g"}, `line 2: group "g" topic "t" partition 0 is already given on line 1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFor([]byte(tc.body), tc.groups)
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(f.Entries) != 0 {
				t.Fatalf("error %v, %d entries; want an error containing %q", err, len(f.Entries), tc.want)
			}
		})
	}
}

func TestCreateFileNeverOverwrites(t *testing.T) {
	p := t.TempDir() + "/x"
	if err := CreateFile(p, func(w io.Writer) error { _, err := io.WriteString(w, "a"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(p, func(io.Writer) error { return nil }); err == nil {
		t.Fatal("an existing file was overwritten")
	}
	q := t.TempDir() + "/y"
	if err := CreateFile(q, func(io.Writer) error { return errors.New("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(q); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial file left behind: %v", err)
	}
}

// FuzzParse: any bytes give a file or an error, never a panic, and a file that parses has only
// valid, distinct entries.
func FuzzParse(f *testing.F) {
	var js, cs bytes.Buffer
	if err := WriteJSON(&js, sampleExport()); err != nil {
		f.Fatal(err)
	}
	if err := WriteCSV(&cs, sampleExport()); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{js.String(), cs.String(), header + `{"group":"g","topic":"t","partition":0,"kafka_before":null,"target":9}` + "\n",
		"g,t,0,1\n", "t,0,1\n", `{"schema_version":1}`, "{", "\uFEFF{}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, groups := range [][]string{nil, {"g"}} {
			checkParsed(t, data, groups)
		}
	})
}

// checkParsed fails t if data parses for groups into entries that are not valid and distinct.
func checkParsed(t *testing.T, data []byte, groups []string) {
	file, err := ParseFor(data, groups)
	if err != nil {
		return
	}
	seen := map[migrate.Key]bool{}
	for _, e := range file.Entries {
		if seen[e.Key] || e.Group == "" || e.Topic == "" || e.Partition < 0 || (e.Offset != nil && *e.Offset < 0) || e.Line < 1 {
			t.Fatalf("bad entry %+v from %q (groups %q)", e, data, groups)
		}
		if e.Offset == nil && file.Format != FormatBackup {
			t.Fatalf("entry without offset in a %s file", file.Format)
		}
		seen[e.Key] = true
	}
}

// TestParseOwnFilesWithUnusualNames: what this tool writes, it reads back, whatever names the
// stores allow: a group with a trailing space (a group.id from a .properties file), a topic
// longer than today's 249 characters (Kafka 0.8 allowed 255).
func TestParseOwnFilesWithUnusualNames(t *testing.T) {
	long := strings.Repeat("t", 252)
	mt := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	legacy := []migrate.LegacyGroup{
		{Group: "billing ", Offsets: []migrate.LegacyOffset{{Topic: "orders", Partition: 0, Offset: 7, Path: "/consumers/billing /offsets/orders/0", Mtime: mt}}},
		{Group: " audit", Offsets: []migrate.LegacyOffset{{Topic: long, Partition: 0, Offset: 9, Path: "/consumers/ audit/offsets/" + long + "/0", Mtime: mt}}},
	}
	e := FromLegacy(legacy, migrate.FilterSpec{}, mt, 0)
	var js, cs bytes.Buffer
	if err := WriteJSON(&js, e); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&cs, e); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "before.jsonl")
	b, err := copier.CreateBackup(path, "fp", mt)
	if err != nil {
		t.Fatal(err)
	}
	before := int64(5)
	if err := b.Record(context.Background(), []copier.GroupResult{{Group: "billing ", Partitions: []copier.PartitionResult{{Topic: "orders", Partition: 0, Before: &before, Target: 7}}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	bk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"export json": js.Bytes(), "export csv": cs.Bytes(), "copy backup": bk} {
		f, err := Parse(data)
		if err != nil {
			t.Errorf("%s written by this tool is refused: %v", name, err)
			continue
		}
		groups := map[string]bool{}
		for _, en := range f.Entries {
			groups[en.Group] = true
		}
		if !groups["billing "] {
			t.Errorf("%s: group %q not read back as written: %v", name, "billing ", groups)
		}
	}
}

// TestParseExportFilter: the filter an export records is read back, its group map into
// Recorded (what a restore --to kafka given no map follows); a null filter records nothing.
func TestParseExportFilter(t *testing.T) {
	for _, tc := range []struct {
		name, filter string
		want         migrate.GroupMap
	}{
		{"null", `null`, nil},
		{"selection only", `{"group_regex":"^g"}`, nil},
		{"group map", `{"group_map":[{"legacy":"a","kafka":"b"}]}`, migrate.GroupMap{"a": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(exportHead + `,"filter":` + tc.filter + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if f.Format != FormatJSON || f.Source != SourceZK || !maps.Equal(f.Recorded, tc.want) {
				t.Errorf("parsed %+v, want recorded map %v", f, tc.want)
			}
		})
	}
}
