package archive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// zkWriter is the legacy fake as a migrate.LegacyWriter: restore writes offsets only.
type zkWriter struct{ *migratetest.LegacyStore }

func (zkWriter) MarkMigrated(context.Context, string, []byte) error {
	return errors.New("no marker in these tests")
}

func (zkWriter) Marker(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("no marker in these tests")
}

// restoreStores is a legacy store holding g1 t/0 at 10 and a Kafka with topic t of two
// partitions and g1 t/0 committed at 12.
func restoreStores() (*migratetest.LegacyStore, *migratetest.KafkaStore) {
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g1", Offsets: []migrate.LegacyOffset{
		{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g1/offsets/t/0"}}})
	kafka := migratetest.NewKafkaStore()
	kafka.AddTopic("t", migrate.PartitionRange{LogEnd: 100}, migrate.PartitionRange{LogEnd: 100})
	kafka.SetCommitted("g1", "t", 0, 12)
	return legacy, kafka
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestoreRefuses calls Restore with each input the command refuses, the stores all given
// and --execute set: every one is refused, nothing is written in either store, no backup is
// made.
func TestRestoreRefuses(t *testing.T) {
	csv := writeTemp(t, "r.csv", "g1,t,0,15\ng1,t,1,3\n")
	single := writeTemp(t, "single.csv", "t,0,15\n")
	backup := writeTemp(t, "copy-backup.jsonl", header+`{"group":"g1","topic":"t","partition":0,"kafka_before":5,"target":12}`+"\n")
	cases := []struct {
		name string
		req  func(*RestoreRequest)
		want string
	}{
		{name: "no target", req: func(r *RestoreRequest) { r.To = "" }, want: "--to is required: kafka or zk"},
		{name: "unknown target", req: func(r *RestoreRequest) { r.To = "s3" }, want: `--to: "s3" is not one of kafka, zk`},
		{name: "no file", req: func(r *RestoreRequest) { r.Path = "" }, want: "--file is required"},
		{name: "execute without a backup path", req: func(r *RestoreRequest) { r.Backup = "" }, want: "--backup: empty path"},
		{name: "to zk without a backup path", req: func(r *RestoreRequest) { r.To, r.Backup = TargetZK, "" }, want: "--backup: empty path"},
		{name: "liveness unseen, consumers not said stopped", req: func(r *RestoreRequest) {
			r.Legacy = snapshotLegacy{r.Legacy.(*migratetest.LegacyStore)}
		}, want: "restore needs --legacy-stopped; stop them, then say so with --legacy-stopped (nothing was written)"},
		{name: "to kafka without kafka", req: func(r *RestoreRequest) { r.Kafka = nil }, want: "restore --to kafka: no Kafka store"},
		{name: "to zk, read-only source", req: func(r *RestoreRequest) {
			r.To, r.Writer, r.ReadOnly = TargetZK, nil, "a data directory is read-only"
		}, want: "--to zk: a data directory is read-only"},
		{name: "no legacy store", req: func(r *RestoreRequest) { r.Legacy = nil }, want: "no legacy store"},
		{name: "file missing", req: func(r *RestoreRequest) { r.Path = filepath.Join(t.TempDir(), "none.csv") }, want: "no such file"},
		{name: "single-group csv without its group", req: func(r *RestoreRequest) { r.Path = single }, want: "add --group"},
		{name: "single-group csv, group from elsewhere than the command line",
			req: func(r *RestoreRequest) { r.Path, r.Filter.Groups = single, []string{"g1"} }, want: "add --group"},
		{name: "group not in the file", req: func(r *RestoreRequest) { r.Filter.Groups = []string{"g2"} }, want: `group "g2" (--group) is not in the file`},
		{name: "empty selection", req: func(r *RestoreRequest) { r.Filter.TopicRegex = regexp.MustCompile("^u$") }, want: "matches no offset"},
		{name: "adjust of kafka offsets into kafka", req: func(r *RestoreRequest) { r.OffsetAdjust = 1 }, want: "--offset-adjust +1"},
		{name: "group map into zk", req: func(r *RestoreRequest) { r.To, r.Filter.GroupMap = TargetZK, migrate.GroupMap{"g1": "k1"} },
			want: "--group-map renames legacy groups into Kafka"},
		{name: "copy backup into zk", req: func(r *RestoreRequest) { r.To, r.Path = TargetZK, backup }, want: "restore it --to kafka"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := restoreStores()
			req := RestoreRequest{Path: csv, To: TargetKafka, Execute: true, Backup: filepath.Join(t.TempDir(), "b"),
				Legacy: legacy, Kafka: kafka, Writer: zkWriter{legacy}}
			tc.req(&req)
			res, err := Restore(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore = %+v, %v; want an error with %q", res, err, tc.want)
			}
			if res != nil {
				t.Errorf("a refused restore planned %+v", res.Plan)
			}
			if n := len(kafka.Commits()); n != 0 {
				t.Errorf("%d Kafka commit(s) after the refusal", n)
			}
			if v, _ := legacy.Offset("g1", "t", 0); v != 10 {
				t.Errorf("ZooKeeper g1 t/0 is %d after the refusal, want 10", v)
			}
			if _, err := os.Stat(req.Backup); req.Backup != "" && err == nil {
				t.Errorf("a refused restore created its backup %s", req.Backup)
			}
		})
	}
}

func TestRestore(t *testing.T) {
	csv := writeTemp(t, "r.csv", "g1,t,0,15\ng1,t,1,3\n")
	cases := []struct {
		name    string
		req     func(*RestoreRequest)
		written int
		kafka   map[int32]int64 // g1's Kafka commits after
		zk      map[int32]int64 // g1's znodes after
	}{
		{name: "to kafka", written: 2, kafka: map[int32]int64{0: 15, 1: 3}, zk: map[int32]int64{0: 10}},
		{name: "to kafka, liveness unseen, consumers said stopped", req: func(r *RestoreRequest) {
			r.Legacy, r.LegacyStopped = snapshotLegacy{r.Legacy.(*migratetest.LegacyStore)}, true
		}, written: 2, kafka: map[int32]int64{0: 15, 1: 3}, zk: map[int32]int64{0: 10}},
		{name: "to zk", req: func(r *RestoreRequest) { r.To, r.Kafka = TargetZK, nil },
			written: 2, kafka: map[int32]int64{0: 12}, zk: map[int32]int64{0: 15, 1: 3}},
		{name: "dry run writes nothing", req: func(r *RestoreRequest) { r.Execute, r.Backup = false, "" },
			kafka: map[int32]int64{0: 12}, zk: map[int32]int64{0: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := restoreStores()
			req := RestoreRequest{Path: csv, To: TargetKafka, Execute: true, Backup: filepath.Join(t.TempDir(), "b"),
				Legacy: legacy, Kafka: kafka, Writer: zkWriter{legacy}}
			if tc.req != nil {
				tc.req(&req)
			}
			res, err := Restore(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			n := res.Plan.Counts()
			if n[copier.StatusWritten] != tc.written || n[copier.StatusFailed]+n[copier.StatusBlocked] != 0 || res.Plan.DryRun != !req.Execute {
				t.Fatalf("counts %v (dry run %t), want %d written", n, res.Plan.DryRun, tc.written)
			}
			st, err := kafka.Groups(context.Background(), []string{"g1"})
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tc.kafka {
				if got := st["g1"].Committed[migrate.TopicPartition{Topic: "t", Partition: p}]; got != want || len(st["g1"].Committed) != len(tc.kafka) {
					t.Errorf("kafka g1 t/%d = %d (all %v), want %d", p, got, st["g1"].Committed, want)
				}
			}
			for p, want := range tc.zk {
				if got, ok := legacy.Offset("g1", "t", p); !ok || got != want {
					t.Errorf("zk g1 t/%d = %d, %t, want %d", p, got, ok, want)
				}
			}
			if _, err := os.Stat(req.Backup); (err == nil) != req.Execute || res.Backup != req.Backup {
				t.Errorf("backup %q (result %q): %v, want one: %t", req.Backup, res.Backup, err, req.Execute)
			}
		})
	}
}

// snapshotLegacy is a legacy store as a point-in-time copy (a data directory): its liveness
// registrations say nothing of who runs now.
type snapshotLegacy struct{ *migratetest.LegacyStore }

func (snapshotLegacy) Snapshot() string {
	return "a data directory shows no live consumers: restore needs --legacy-stopped"
}
