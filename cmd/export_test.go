package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestExport(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		mutate   func(writableStores)
		wantCode int
		want     map[string]int64 // group/topic/partition -> offset, from parsing the output back
		source   archive.Source
		wantErr  string
	}{
		{name: "zk json, kafka never contacted", args: []string{"export"}, wantCode: ExitOK, source: archive.SourceZK,
			want: map[string]int64{"g1/t/0": 10, "g1/t/1": 20, "g2/t/0": 5}},
		{name: "zk csv of one group", args: []string{"export", "--format", "csv", "--group", "g1"}, wantCode: ExitOK,
			want: map[string]int64{"g1/t/0": 10, "g1/t/1": 20}},
		{name: "kafka json", args: []string{"export", "--from", "kafka"}, wantCode: ExitOK, source: archive.SourceKafka,
			want: map[string]int64{"g1/t/1": 30}},
		{name: "kafka csv, topic filter", args: []string{"export", "--from", "kafka", "--format", "csv", "--topic-regex", "^u$"}, wantCode: ExitOK,
			mutate: func(s writableStores) { s.legacy.SetOffset("g1", "u", 0, 1); s.kafka.SetCommitted("g1", "u", 0, 3) },
			want:   map[string]int64{"g1/u/0": 3}},
		{name: "invalid znode left out: exit 2", args: []string{"export"}, wantCode: ExitUnsafe, source: archive.SourceZK,
			mutate: func(s writableStores) {
				s.legacy.SetGroup(migrate.LegacyGroup{Group: "g2", Offsets: []migrate.LegacyOffset{
					{Topic: "t", Partition: 0, Path: "/consumers/g2/offsets/t/0", Invalid: "empty offset data"}}})
			}, want: map[string]int64{"g1/t/0": 10, "g1/t/1": 20}, wantErr: "1 znode(s) hold no usable offset"},
		{name: "bad from", args: []string{"export", "--from", "s3"}, wantCode: ExitError, wantErr: "--from"},
		{name: "bad format", args: []string{"export", "--format", "xml"}, wantCode: ExitError, wantErr: "--format"},
		{name: "unknown group", args: []string{"export", "--group", "nope"}, wantCode: ExitError, wantErr: "group not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := writableFixture()
			if !slices.Contains(tc.args, "kafka") {
				s.kafkaErr = errBoom // export --from zk must not need Kafka
			}
			if tc.mutate != nil {
				tc.mutate(s)
			}
			out, errOut, code := runWith(t, s, nil, tc.args...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, tc.wantErr, out, errOut)
			}
			if tc.want == nil {
				return
			}
			f, err := archive.Parse([]byte(out))
			if err != nil {
				t.Fatalf("output does not parse back: %v\n%s", err, out)
			}
			if f.Source != tc.source {
				t.Errorf("source %q, want %q", f.Source, tc.source)
			}
			got := map[string]int64{}
			for _, e := range f.Entries {
				got[e.Key.String()] = *e.Offset
			}
			if len(got) != len(tc.want) {
				t.Errorf("exported %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %d, want %d (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestExportFileNeverOverwritten(t *testing.T) {
	s := writableFixture()
	p := filepath.Join(t.TempDir(), "zk.json")
	if _, errOut, code := runWith(t, s, nil, "export", "--file", p); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := archive.Parse(first); err != nil || len(f.Entries) != 3 {
		t.Fatalf("file: %v %+v", err, f)
	}
	s.legacy.SetOffset("g1", "t", 0, 99)
	if _, errOut, code := runWith(t, s, nil, "export", "--file", p); code != ExitError || !strings.Contains(errOut, "exists") {
		t.Fatalf("second export over the same file: exit %d: %s", code, errOut)
	}
	if again, _ := os.ReadFile(p); string(again) != string(first) {
		t.Error("the existing export was changed")
	}
}
