package archive

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// exportStores is a legacy store of two groups (g1 with two offsets, g2 with one) and a Kafka
// that holds commits of g1 and of k9, the Kafka group a map may send g2 to.
func exportStores() (*migratetest.LegacyStore, *migratetest.KafkaStore) {
	legacy := migratetest.NewLegacyStore(
		migrate.LegacyGroup{Group: "g1", Offsets: []migrate.LegacyOffset{
			{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g1/offsets/t/0"},
			{Topic: "t", Partition: 1, Offset: 20, Path: "/consumers/g1/offsets/t/1"}}},
		migrate.LegacyGroup{Group: "g2", Offsets: []migrate.LegacyOffset{
			{Topic: "t", Partition: 0, Offset: 5, Path: "/consumers/g2/offsets/t/0"}}},
	)
	kafka := migratetest.NewKafkaStore()
	kafka.AddTopic("t", migrate.PartitionRange{LogEnd: 100}, migrate.PartitionRange{LogEnd: 100})
	kafka.SetCommitted("g1", "t", 1, 30)
	kafka.SetCommitted("k9", "t", 0, 7)
	return legacy, kafka
}

// TestExportRefuses calls Export with each input the command refuses: every one is refused,
// and those refused on their values alone before anything is read.
func TestExportRefuses(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "existing.json")
	if err := os.WriteFile(existing, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		req      func(*ExportRequest)
		want     string
		readsZK  bool // the refusal comes after the read (as the command's always did)
		mustKeep string
	}{
		{name: "unknown source", req: func(r *ExportRequest) { r.From = "s3" }, want: `--from: "s3" is not one of zk, kafka`},
		{name: "no source", req: func(r *ExportRequest) { r.From = "" }, want: `--from: "" is not one of zk, kafka`},
		{name: "unknown format", req: func(r *ExportRequest) { r.Format = "xml" }, want: `--format: "xml" is not one of json, csv`},
		{name: "backup format", req: func(r *ExportRequest) { r.Format = FormatBackup }, want: `--format: "backup" is not one of json, csv`},
		{name: "empty path", req: func(r *ExportRequest) { r.Path = "" }, want: "--file: empty path (use - for stdout)"},
		{name: "adjust of kafka offsets", req: func(r *ExportRequest) { r.From, r.OffsetAdjust = SourceKafka, 1 },
			want: "--offset-adjust +1 with --from kafka"},
		{name: "kafka source without kafka", req: func(r *ExportRequest) { r.From, r.Kafka = SourceKafka, nil },
			want: "export --from kafka: no Kafka store"},
		{name: "no legacy store", req: func(r *ExportRequest) { r.Legacy = nil }, want: "no legacy store"},
		{name: "stdout without a writer", req: func(r *ExportRequest) { r.Path, r.Out = "-", nil }, want: "no output writer"},
		{name: "existing file", req: func(r *ExportRequest) { r.Path = existing }, want: "exists", readsZK: true, mustKeep: "keep me\n"},
		{name: "unknown group", req: func(r *ExportRequest) { r.Filter.Groups = []string{"nope"} }, want: "group not found", readsZK: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := exportStores()
			req := ExportRequest{From: SourceZK, Format: FormatJSON, Path: filepath.Join(t.TempDir(), "out.json"),
				Legacy: legacy, Kafka: kafka, Out: &bytes.Buffer{}}
			tc.req(&req)
			res, err := Export(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Export = %+v, %v; want an error with %q", res, err, tc.want)
			}
			if n := legacy.ReadCalls(); !tc.readsZK && n != 0 {
				t.Errorf("%d legacy read(s) before the refusal, want none", n)
			}
			if tc.mustKeep != "" {
				if got, _ := os.ReadFile(req.Path); string(got) != tc.mustKeep {
					t.Errorf("the existing file now holds %q", got)
				}
			} else if _, err := os.Stat(req.Path); req.Path != "" && req.Path != "-" && err == nil {
				t.Errorf("a refused export created %s", req.Path)
			}
		})
	}
}

func TestExport(t *testing.T) {
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		req     func(*ExportRequest, *migratetest.LegacyStore)
		want    map[string]int64 // group/topic/partition -> offset, parsed back
		kafka   map[string]string
		source  Source
		groups  int
		invalid int
		live    []LiveGroup
	}{
		{name: "zk json, live consumers and an invalid znode reported",
			req: func(r *ExportRequest, l *migratetest.LegacyStore) {
				l.SetLive("g1", "ids/c1", "owners/t/0=c1-0")
				l.PutOffset("g2", migrate.LegacyOffset{Topic: "t", Partition: 1, Path: "/consumers/g2/offsets/t/1", Invalid: "empty offset data"})
			},
			want: map[string]int64{"g1/t/0": 10, "g1/t/1": 20, "g2/t/0": 5}, source: SourceZK, groups: 2, invalid: 1,
			live: []LiveGroup{{Group: "g1", Consumers: 1}}},
		{name: "zk csv adjusted", req: func(r *ExportRequest, _ *migratetest.LegacyStore) { r.Format, r.OffsetAdjust = FormatCSV, 1 },
			want: map[string]int64{"g1/t/0": 11, "g1/t/1": 21, "g2/t/0": 6}, groups: 2},
		{name: "kafka json under a group map names both groups",
			req: func(r *ExportRequest, _ *migratetest.LegacyStore) {
				r.From, r.Filter.GroupMap = SourceKafka, migrate.GroupMap{"g2": "k9"}
			},
			want: map[string]int64{"g1/t/1": 30, "g2/t/0": 7}, kafka: map[string]string{"g2": "k9"}, source: SourceKafka, groups: 2},
		{name: "kafka to stdout, one group", req: func(r *ExportRequest, _ *migratetest.LegacyStore) {
			r.From, r.Path, r.Filter.Groups = SourceKafka, "-", []string{"g1"}
		}, want: map[string]int64{"g1/t/1": 30}, source: SourceKafka, groups: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := exportStores()
			var out bytes.Buffer
			req := ExportRequest{From: SourceZK, Format: FormatJSON, Path: filepath.Join(t.TempDir(), "out"),
				Legacy: legacy, Kafka: kafka, Out: &out, Now: at}
			tc.req(&req, legacy)
			if req.From == SourceZK {
				kafka.FailReads(errBoom) // an export of ZooKeeper never reads Kafka
				kafka.FailTopics(errBoom)
			}
			res, err := Export(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			data := out.Bytes()
			if req.Path != "-" {
				if data, err = os.ReadFile(req.Path); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Parse(data)
			if err != nil {
				t.Fatalf("the export does not parse back: %v\n%s", err, data)
			}
			got, kafkaGroups := map[string]int64{}, map[string]string{}
			for _, e := range f.Entries {
				got[e.Key.String()] = *e.Offset
				if e.KafkaGroup != "" {
					kafkaGroups[e.Group] = e.KafkaGroup
				}
			}
			if !equalMaps(got, tc.want) || !equalMaps(kafkaGroups, tc.kafka) || f.Source != tc.source {
				t.Errorf("exported %v (kafka groups %v, source %q), want %v (%v, %q)", got, kafkaGroups, f.Source, tc.want, tc.kafka, tc.source)
			}
			if res.Groups != tc.groups || res.Offsets != len(tc.want) || len(res.Invalid) != tc.invalid {
				t.Errorf("result %+v, want %d groups, %d offsets, %d invalid", res, tc.groups, len(tc.want), tc.invalid)
			}
			if len(res.Live) != len(tc.live) || (len(tc.live) > 0 && res.Live[0] != tc.live[0]) {
				t.Errorf("live %+v, want %+v", res.Live, tc.live)
			}
		})
	}
}

var errBoom = errors.New("boom")

func equalMaps[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
