package cmd

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/verify"
)

// agreed is the writable fixture after a copy: Kafka holds every ZooKeeper offset (and t/1 of
// g1 is ahead at 30, as the fixture has it).
func agreed() writableStores {
	s := writableFixture()
	s.kafka.SetCommitted("g1", "t", 0, 10)
	s.kafka.SetCommitted("g2", "t", 0, 5)
	return s
}

func TestVerifyVerdictsAndExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		mutate   func(writableStores)
		setup    func(*deps)
		env      map[string]string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{name: "agree, kafka ahead tolerated", args: []string{"migrate", "verify"}, wantCode: ExitOK,
			wantOut: []string{"kafka-ahead", "2 match, 1 kafka-ahead", "Groups: 2 passed, 0 failed.", "The stores agree."}},
		{name: "strict fails kafka ahead", args: []string{"migrate", "verify", "--strict"}, wantCode: ExitUnsafe,
			wantOut: []string{`Group "g1" FAILS: 1 partition(s) disagree.`, "--strict requires equality"}, wantErr: "the stores disagree"},
		{name: "within max lead", args: []string{"migrate", "verify", "--max-kafka-lead", "10"}, wantCode: ExitOK},
		{name: "max lead from the environment", args: []string{"migrate", "verify"}, wantCode: ExitUnsafe,
			env: map[string]string{"ZK2KAFKA_MAX_KAFKA_LEAD": "9"}, wantOut: []string{"more than --max-kafka-lead 9"}},
		{name: "explicit no limit", args: []string{"migrate", "verify", "--max-kafka-lead", "-1", "--strict"}, wantCode: ExitUnsafe},
		{name: "beyond max lead", args: []string{"migrate", "verify", "--max-kafka-lead", "9"}, wantCode: ExitUnsafe,
			wantOut: []string{"more than --max-kafka-lead 9"}},
		{name: "kafka behind", args: []string{"migrate", "verify", "--group", "g2"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) { s.legacy.SetOffset("g2", "t", 0, 6) }, wantOut: []string{"kafka-behind"}},
		{name: "missing in kafka", args: []string{"migrate", "verify"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) { s.legacy.SetOffset("g2", "t", 1, 6) }, wantOut: []string{"missing-in-kafka"}},
		{name: "missing in zk", args: []string{"migrate", "verify"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) { s.kafka.SetCommitted("g2", "t", 1, 3) }, wantOut: []string{"missing-in-zk"}},
		{name: "topic filter ignores other topics' commits", args: []string{"migrate", "verify", "--topic-regex", "^t$"}, wantCode: ExitOK,
			mutate: func(s writableStores) { s.kafka.SetCommitted("g2", "other", 0, 3) }},
		{name: "invalid znode", args: []string{"migrate", "verify", "--group", "g2"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) {
				s.legacy.SetGroup(migrate.LegacyGroup{Group: "g2", Offsets: []migrate.LegacyOffset{
					{Topic: "t", Partition: 0, Path: "/consumers/g2/offsets/t/0", Invalid: "empty offset data"}}})
			}, wantOut: []string{"invalid-znode", "empty offset data"}},
		{name: "kafka above the log end though both stores agree", args: []string{"migrate", "verify", "--group", "g2"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) { s.legacy.SetOffset("g2", "t", 0, 500); s.kafka.SetCommitted("g2", "t", 0, 500) },
			wantOut: []string{"kafka-out-of-range", "Kafka commit 500 is above the log end 100", "1 Kafka offset(s) outside the log",
				"The stores agree, but Kafka's offsets are outside the log"},
			wantErr: "Kafka holds committed offsets outside the partitions' logs: 1 partition(s) failed"},
		{name: "a commit of a topic only kafka has, below its log start", args: []string{"migrate", "verify", "--group", "g2"}, wantCode: ExitUnsafe,
			mutate: func(s writableStores) {
				s.kafka.AddTopic("u", migrate.PartitionRange{LogStart: 50, LogEnd: 60})
				s.kafka.SetCommitted("g2", "u", 0, 10)
			}, wantOut: []string{"kafka-out-of-range", "Kafka commit 10 is below the log start 50", "the group's ZooKeeper tree has no offset"},
			wantErr: "Kafka holds committed offsets outside the partitions' logs"},
		{name: "unknown group", args: []string{"migrate", "verify", "--group", "nope"}, wantCode: ExitError, wantErr: "group not found"},
		{name: "kafka unreadable", args: []string{"migrate", "verify"}, wantCode: ExitError, wantErr: "boom",
			mutate: func(s writableStores) { s.kafka.FailReads(errBoom) }},
		{name: "mark with a topic filter", args: []string{"migrate", "verify", "--mark", "--topic-regex", "^t$"}, wantCode: ExitError,
			wantErr: "--mark with --topic-regex"},
		{name: "negative lead", args: []string{"migrate", "verify", "--max-kafka-lead", "-3"}, wantCode: ExitError, wantErr: "is negative"},
		{name: "strict and lead", args: []string{"migrate", "verify", "--strict", "--max-kafka-lead", "3"}, wantCode: ExitError, wantErr: "--strict already"},
		{name: "bad output", args: []string{"migrate", "verify", "-o", "xml"}, wantCode: ExitError, wantErr: "--output"},
		{name: "policy flags are not verify's", args: []string{"migrate", "verify", "--on-conflict", "zk"}, wantCode: ExitError, wantErr: "unknown flag"},
		{name: "via topic reads its own commits", args: []string{"migrate", "verify", "--via-topic"}, wantCode: ExitUnsafe,
			setup: viaTopic(fakeSource{committed: map[string]map[migrate.TopicPartition]int64{
				"g1": {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 30},
				"g2": {{Topic: "t", Partition: 0}: 4},
			}}), wantOut: []string{"kafka-behind", "Kafka 4 is 1 behind"}},
		{name: "via topic missing a group", args: []string{"migrate", "verify", "--via-topic"}, wantCode: ExitError, wantErr: `no answer for group "g2"`,
			setup: viaTopic(fakeSource{committed: map[string]map[migrate.TopicPartition]int64{"g1": {}}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			s := agreed()
			if tc.mutate != nil {
				tc.mutate(s)
			}
			out, errOut, code := runWith(t, s, tc.setup, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if len(s.kafka.Commits()) != 0 || s.legacy.writeCount() != 0 || len(s.legacy.markers) != 0 {
				t.Errorf("verify wrote something")
			}
		})
	}
}

func viaTopic(src migrate.CommittedSource) func(*deps) {
	return func(d *deps) {
		d.viaTopic = func(context.Context, *globalOptions, *deps) (migrate.CommittedSource, func(), error) {
			return src, func() {}, nil
		}
	}
}

func TestVerifyJSONAndJUnit(t *testing.T) {
	s := agreed()
	s.kafka.SetCommitted("g2", "t", 0, 4)
	out, _, code := runWith(t, s, nil, "migrate", "verify", "-o", "json")
	var r verify.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != ExitUnsafe {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if r.SchemaVersion != verify.ReportSchemaVersion || r.Pass || len(r.Groups) != 2 || r.Groups[1].Verdict != verify.VerdictFail ||
		r.Groups[1].Partitions[0].Status != verify.StatusKafkaBehind || r.CheckedAt.IsZero() {
		t.Fatalf("report %+v", r)
	}

	out, _, code = runWith(t, s, nil, "migrate", "verify", "-o", "junit")
	var doc verify.JUnitSuites
	if err := xml.Unmarshal([]byte(out), &doc); err != nil || code != ExitUnsafe {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	cases := doc.Suites[0].Cases
	if doc.Failures != 1 || len(cases) != 2 || len(cases[0].Failures) != 0 || len(cases[1].Failures) != 1 ||
		cases[1].Failures[0].Type != "kafka-behind" {
		t.Fatalf("junit %+v", doc)
	}
}

func TestVerifyMark(t *testing.T) {
	s := agreed()
	s.legacy.SetOffset("g3", "t", 0, 7) // fails: Kafka has no commit
	s.legacy.SetGroup(migrate.LegacyGroup{Group: "g4", LiveConsumers: []string{"ids/c1"},
		Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 1, Path: "/consumers/g4/offsets/t/0"}}})
	s.kafka.SetCommitted("g4", "t", 0, 1) // passes, but still has a live consumer
	before := time.Now().UTC()
	out, errOut, code := runWith(t, s, nil, "migrate", "verify", "--mark")
	if code != ExitUnsafe || !strings.Contains(out, `Group "g1" passes and is marked migrated`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for g, want := range map[string]int{"g1": 2, "g2": 1, "g3": -1, "g4": -1} {
		data, found, _ := s.legacy.Marker(context.Background(), g)
		if want < 0 {
			if found {
				t.Errorf("group %s marked: %s", g, data)
			}
			continue
		}
		var m verify.Marker
		if err := json.Unmarshal(data, &m); err != nil || !found {
			t.Fatalf("marker of %s: %q found %t: %v", g, data, found, err)
		}
		if m.Offsets != want || m.Tool != "zk2kafka "+readBuild().Version || m.MigratedAt.Before(before.Add(-time.Second)) {
			t.Errorf("marker of %s: %+v, want %d offsets", g, m, want)
		}
	}
	if !strings.Contains(errOut, "live legacy consumers") || s.legacy.writeCount() != 0 {
		t.Errorf("stderr %q, %d offset writes", errOut, s.legacy.writeCount())
	}

	s = agreed()
	s.legacy.writeErr = errBoom
	if _, errOut, code := runWith(t, s, nil, "migrate", "verify", "--mark"); code != ExitError || !strings.Contains(errOut, "boom") {
		t.Errorf("a failed marker: exit %d, %s", code, errOut)
	}
	// A legacy store without a write side cannot mark: refused before reading anything.
	f := fixture()
	if _, errOut, code := run(t, f, "migrate", "verify", "--mark"); code != ExitError || !strings.Contains(errOut, "cannot write") {
		t.Errorf("read-only store: exit %d, %s", code, errOut)
	}
}
