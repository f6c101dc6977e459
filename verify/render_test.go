package verify

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sample has one passing group (a match and a tolerated kafka-ahead) and one failing group with
// every failing status, plus a name that needs XML escaping.
func sample() Report {
	legacy := []migrate.LegacyGroup{
		{Group: "orders", Offsets: []migrate.LegacyOffset{off("t", 0, 10), off("t", 1, 20)}},
		{Group: `billing<&">`, LiveConsumers: []string{"ids/c1", "owners/t/0=c1-0", "owners/t/1=c1-0"}, Offsets: []migrate.LegacyOffset{
			off("t", 0, 10), off("t", 1, 20),
			{Topic: "t", Partition: 2, Path: "/consumers/g/offsets/t/2", Invalid: "empty offset data"},
			off("t", 4, 900),
		}},
	}
	kafka := map[string]migrate.GroupState{
		"orders":      commits("t", 0, 10, "t", 1, 25),
		`billing<&">`: commits("t", 0, 5, "t", 3, 1, "t", 4, 900),
	}
	in := migrate.PartitionRange{LogEnd: 100}
	topics := map[string]migrate.TopicInfo{"t": {Exists: true, Partitions: map[int32]migrate.PartitionRange{
		0: in, 1: in, 2: in, 3: in, 4: {LogStart: 10, LogEnd: 800}}}}
	r := Compare(legacy, kafka, topics, Options{MaxKafkaLead: lead(100)})
	r.CheckedAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return r
}

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "junit", sample()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "verify.junit.xml")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("junit output differs from %s (go test ./verify -update to accept):\n%s", golden, buf.String())
	}
}

// TestJUnitParsesBack reads the document with a decoder of its own (not our types), as a CI
// system would.
func TestJUnitParsesBack(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name     string `xml:"name,attr"`
				Failures []struct {
					Type    string `xml:"type,attr"`
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || len(s.Cases) != 2 {
		t.Fatalf("suite: tests %d failures %d cases %d, want 2, 1, 2", s.Tests, s.Failures, len(s.Cases))
	}
	bad, good := s.Cases[0], s.Cases[1]
	if bad.Name != `billing<&">` || good.Name != "orders" || len(good.Failures) != 0 {
		t.Fatalf("cases: %+v", s.Cases)
	}
	got := []string{}
	for _, f := range bad.Failures {
		got = append(got, f.Type)
		if !strings.Contains(f.Message, "t/") {
			t.Errorf("failure message %q does not name the partition", f.Message)
		}
	}
	want := []string{"kafka-behind", "missing-in-kafka", "invalid-znode", "missing-in-zk", "kafka-out-of-range"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("failures %v, want %v (one per failed partition, in partition order)", got, want)
	}
}

func TestJSONReport(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "json", sample()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int            `json:"schema_version"`
		Pass          bool           `json:"pass"`
		Options       map[string]any `json:"options"`
		Summary       Summary        `json:"summary"`
		Groups        []struct {
			Group      string `json:"group"`
			Verdict    string `json:"verdict"`
			Partitions []struct {
				Status string `json:"status"`
				OK     bool   `json:"ok"`
				ZK     *int64 `json:"zk_offset"`
				Kafka  *int64 `json:"kafka_offset"`
				LogEnd *int64 `json:"log_end"`
			} `json:"partitions"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if doc.SchemaVersion != ReportSchemaVersion || doc.Pass || doc.Options["max_kafka_lead"] != float64(100) ||
		doc.Summary.GroupsFailed != 1 || len(doc.Groups) != 2 || doc.Groups[1].Verdict != "pass" {
		t.Fatalf("unexpected report: %s", buf.String())
	}
	p := doc.Groups[1].Partitions[1]
	if p.Status != "kafka-ahead" || !p.OK || *p.ZK != 20 || *p.Kafka != 25 {
		t.Errorf("orders t/1: %+v", p)
	}
	if p := doc.Groups[0].Partitions[3]; p.Status != "missing-in-zk" || p.ZK != nil || *p.Kafka != 1 {
		t.Errorf("billing t/3: %+v", p)
	}
	if p := doc.Groups[0].Partitions[4]; p.Status != "kafka-out-of-range" || p.OK || *p.ZK != 900 || *p.Kafka != 900 || p.LogEnd == nil || *p.LogEnd != 800 {
		t.Errorf("billing t/4: %+v, want kafka-out-of-range, failed, both at 900, log end 800", p)
	}
}

func TestTable(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "table", sample()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{"kafka-behind", "missing-in-zk", "FAIL", "kafka-ahead", "ok",
		"2 group(s), 7 partition(s): 1 match, 1 kafka-ahead, 1 kafka-behind, 1 missing-in-kafka, 1 missing-in-zk, 1 invalid-znode, 1 kafka-out-of-range",
		"Groups: 1 passed, 1 failed.", `Group "billing<&\">" FAILS: 4 partition(s) disagree, 1 Kafka offset(s) outside the log.`, "still has 1 live legacy consumer(s)",
		"kafka-out-of-range │ 900 │ 900", "Kafka commit 900 is above the log end 800", "Kafka holds 1 committed offset(s) outside the partition's log",
		"--max-kafka-lead=100", "The stores DISAGREE"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "match") != 1 { // only in the summary: matches are counted, not listed
		t.Errorf("matches listed:\n%s", out)
	}
	if err := Render(&buf, "yaml", sample()); err == nil {
		t.Error("unknown format accepted")
	}
}
