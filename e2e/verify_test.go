package e2e_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/verify"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// TestVerifyVerdicts builds one group per verdict in the real stores (offsets written by the
// real adapters, a "-1" znode written raw) and checks each status, verdict and exit code, then
// reads the JUnit document back with a decoder of its own.
func TestVerifyVerdicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10, 10)
	type group struct {
		zk, kafka map[int32]int64
		raw       string // data of a raw znode for partition 0, instead of zk
		want      []verify.Status
		verdict   verify.Verdict
	}
	groups := map[string]*group{
		"match":            {zk: map[int32]int64{0: 4, 1: 5}, kafka: map[int32]int64{0: 4, 1: 5}, want: []verify.Status{"match", "match"}, verdict: "pass"},
		"kafka-ahead":      {zk: map[int32]int64{0: 4}, kafka: map[int32]int64{0: 7}, want: []verify.Status{"kafka-ahead"}, verdict: "pass"},
		"kafka-behind":     {zk: map[int32]int64{0: 6}, kafka: map[int32]int64{0: 3}, want: []verify.Status{"kafka-behind"}, verdict: "fail"},
		"missing-in-kafka": {zk: map[int32]int64{0: 6}, want: []verify.Status{"missing-in-kafka"}, verdict: "fail"},
		"missing-in-zk":    {zk: map[int32]int64{0: 2}, kafka: map[int32]int64{0: 2, 2: 3}, want: []verify.Status{"match", "missing-in-zk"}, verdict: "fail"},
		"invalid-znode":    {raw: "-1", kafka: map[int32]int64{0: 2}, want: []verify.Status{"invalid-znode"}, verdict: "fail"},
	}
	names := map[string]string{} // case -> group name
	for c, g := range groups {
		name := e.group() + "-" + c
		e.deleteGroupAtEnd(name)
		names[c] = name
		if g.raw != "" {
			e.rawZnode(name, topic, 0, g.raw)
		} else {
			e.zkOffsets(name, topic, g.zk)
		}
		if len(g.kafka) > 0 {
			e.kafkaCommit(name, topic, "e2e", g.kafka)
		}
	}

	r := e.mustCLI(2, "migrate", "verify", "-o", "json")
	rep := decodeJSON[verify.Report](t, r)
	// The independent path, decoding __consumer_offsets itself, must reach the same report.
	viaTopic := decodeJSON[verify.Report](t, e.mustCLI(2, "migrate", "verify", "-o", "json", "--via-topic"))
	if a, b := statusLines(rep), statusLines(viaTopic); !slices.Equal(a, b) {
		t.Fatalf("OffsetFetch and __consumer_offsets disagree:\nfetch: %q\ntopic: %q", a, b)
	}
	if rep.Pass || rep.Summary.Groups != len(groups) || rep.Summary.GroupsPassed != 2 {
		t.Fatalf("report: pass %t, summary %+v\n%s", rep.Pass, rep.Summary, r)
	}
	for _, gr := range rep.Groups {
		var (
			want *group
			c    string
		)
		for k, g := range groups {
			if names[k] == gr.Group {
				want, c = g, k
			}
		}
		if want == nil {
			t.Fatalf("unexpected group %q", gr.Group)
		}
		var got []verify.Status
		for _, p := range gr.Partitions {
			got = append(got, p.Status)
		}
		if !slices.Equal(got, want.want) || gr.Verdict != want.verdict {
			t.Errorf("%s: %v %s, want %v %s: %+v", c, got, gr.Verdict, want.want, want.verdict, gr.Partitions)
		}
	}

	ahead := names["kafka-ahead"]
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--group", ahead}, 0},
		{[]string{"--group", ahead, "--strict"}, 2},
		{[]string{"--group", ahead, "--max-kafka-lead", "2"}, 2},
		{[]string{"--group", ahead, "--max-kafka-lead", "3"}, 0},
		{[]string{"--group", names["match"], "--strict"}, 0},
		{[]string{"--group", names["kafka-behind"]}, 2},
	} {
		e.mustCLI(tc.code, append([]string{"migrate", "verify"}, tc.args...)...)
	}

	r = e.mustCLI(2, "migrate", "verify", "-o", "junit")
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name     string `xml:"name,attr"`
				Failures []struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("junit: %v\n%s", err, r)
	}
	s := doc.Suites[0]
	if s.Tests != len(groups) || s.Failures != 4 || len(s.Cases) != len(groups) {
		t.Fatalf("junit suite: tests %d failures %d cases %d\n%s", s.Tests, s.Failures, len(s.Cases), r.stdout)
	}
	for _, c := range s.Cases {
		var types []string
		for _, f := range c.Failures {
			types = append(types, f.Type)
		}
		for k, g := range groups {
			if names[k] != c.Name {
				continue
			}
			var want []string
			for _, st := range g.want {
				if st != verify.StatusMatch && st != verify.StatusKafkaAhead {
					want = append(want, string(st))
				}
			}
			if !slices.Equal(types, want) {
				t.Errorf("junit case %s: failures %v, want %v", k, types, want)
			}
		}
	}
}

// TestVerifyMarkAfterCopy copies two groups, verifies with --mark, and checks the markers in
// ZooKeeper itself: written for the passing groups only, beside the offsets, which are
// untouched and which plan still reads as before.
func TestVerifyMarkAfterCopy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	g1, g2, g3 := e.group(), e.group(), e.group()
	e.zkOffsets(g1, topic, map[int32]int64{0: 3, 1: 4})
	e.zkOffsets(g2, topic, map[int32]int64{0: 5})
	e.zkOffsets(g3, topic, map[int32]int64{1: 6}) // never copied: missing-in-kafka
	e.mustCLI(0, "migrate", "copy", "--group", g1, "--group", g2, "--execute", "--backup", e.file("backup"))
	before := e.cli("migrate", "plan", "-o", "json")

	r := e.mustCLI(2, "migrate", "verify", "--mark", "-o", "json")
	rep := decodeJSON[verify.Report](t, r)
	for _, gr := range rep.Groups {
		data, _, err := e.raw.Get(e.chroot + "/consumers/" + gr.Group + "/" + zkreader.MarkerName)
		marked := err == nil
		if marked != (gr.Group != g3) || gr.Marked != marked {
			t.Errorf("group %s: marker present %t (err %v), report marked %t; want marked iff it passes (%s)", gr.Group, marked, err, gr.Marked, gr.Verdict)
			continue
		}
		if !marked {
			continue
		}
		var m struct {
			MigratedAt string `json:"migrated_at"`
			Tool       string `json:"tool"`
			Offsets    int    `json:"offsets"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.Offsets != len(gr.Partitions) || !strings.HasPrefix(m.Tool, "zk2kafka ") || m.MigratedAt == "" {
			t.Errorf("marker of %s: %s (%v)", gr.Group, data, err)
		}
		if got, found, err := e.zr.Marker(e.ctx(), gr.Group); err != nil || !found || string(got) != string(data) {
			t.Errorf("zkreader.Marker(%s): %q %t %v", gr.Group, got, found, err)
		}
	}
	after := e.cli("migrate", "plan", "-o", "json")
	if before.code != after.code || decodeJSON[planDoc](t, before).Fingerprint != decodeJSON[planDoc](t, after).Fingerprint {
		t.Errorf("the markers changed what plan reads:\nbefore %s\nafter %s", before, after)
	}
	// Verifying again rewrites the markers: a second --mark is fine.
	e.mustCLI(0, "migrate", "verify", "--mark", "--group", g1)
}

// statusLines flattens a report to "group topic/partition status" lines, in report order.
func statusLines(r verify.Report) []string {
	var out []string
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			out = append(out, fmt.Sprintf("%s %s/%d %s", g.Group, p.Topic, p.Partition, p.Status))
		}
	}
	return out
}
