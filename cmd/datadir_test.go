package cmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// dataDirStores opens the real legacy store (so --zk-data-dir reaches package datadir) and
// an in-memory Kafka that records writes.
type dataDirStores struct{ kafka *migratetest.KafkaStore }

func (s dataDirStores) OpenLegacy(ctx context.Context, g *globalOptions, d *deps) (*legacy.Source, error) {
	return realStores{}.OpenLegacy(ctx, g, d)
}

func (s dataDirStores) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	return s.kafka, func() {}, nil
}

// fixtureDir is a real ZooKeeper 3.9.3 data directory (see zkreader/datadir's fixtures).
const fixtureDir = "../zkreader/datadir/testdata/3.9.3"

func TestDataDir(t *testing.T) {
	dd := []string{"--zk-data-dir", fixtureDir, "--zk-chroot", "/legacy"}
	cases := []struct {
		name    string
		args    []string
		code    int
		stdout  string // substring of stdout
		stderr  string // substring of stderr
		written bool   // Kafka received commits
	}{
		{name: "export", args: append([]string{"export", "--from", "zk", "--format", "csv"}, dd...),
			code: 2, stdout: "g0,t0,0,30000", stderr: "read zookeeper data directory"}, // 2: g5 holds invalid znodes
		{name: "export at a zxid", args: append([]string{"export", "--from", "zk", "--zk-zxid", "0x60"}, dd...),
			stderr: "at zxid 0x60"},
		{name: "plan", args: append([]string{"migrate", "plan", "--kafka", "k:9092", "--group", "g0"}, dd...),
			code: 2, stdout: "topic-missing", stderr: "last transaction"},
		{name: "with --zk", args: append([]string{"migrate", "plan", "--zk", "z:2181", "--kafka", "k:9092"}, dd...),
			code: 1, stderr: "--zk-data-dir and --zk (z:2181) are exclusive"},
		{name: "chroot without a data dir", args: []string{"migrate", "plan", "--zk", "z:2181", "--kafka", "k:9092", "--zk-chroot", "/x"},
			code: 1, stderr: "--zk-chroot applies only with --zk-data-dir"},
		{name: "bad zxid", args: append([]string{"export", "--from", "zk", "--zk-zxid", "soon"}, dd...),
			code: 1, stderr: `--zk-zxid: "soon" is not a positive zxid`},
		{name: "zxid beyond the logs", args: append([]string{"export", "--from", "zk", "--zk-zxid", "0x7fffffff"}, dd...),
			code: 1, stderr: "holds no transaction with that zxid"},
		{name: "copy without --legacy-stopped", args: append([]string{"migrate", "copy", "--kafka", "k:9092", "--execute"}, dd...),
			code: 1, stderr: "needs --legacy-stopped"},
		{name: "restore --to kafka without --legacy-stopped", args: append([]string{"restore", "--to", "kafka", "--file", "FILE", "--kafka", "k:9092", "--execute"}, dd...),
			code: 1, stderr: "needs --legacy-stopped"},
		{name: "octal-looking zxid is decimal", args: append([]string{"export", "--from", "zk", "--zk-zxid", "0100"}, dd...),
			stderr: "at zxid 0x64"}, // 100, not octal 0100 = 64
		{name: "dual-commit", args: append([]string{"migrate", "dual-commit", "--kafka", "k:9092"}, dd...),
			code: 1, stderr: "a data directory (--zk-data-dir) never changes"},
		{name: "copy with --legacy-stopped", args: append([]string{"migrate", "copy", "--kafka", "k:9092", "--execute", "--legacy-stopped",
			"--group", "g4", "--topic-regex", "t0", "--backup", "BACKUP"}, dd...),
			stderr: "they are", written: true},
		{name: "missing dir", args: []string{"export", "--from", "zk", "--zk-data-dir", "testdata/no-such-dir"},
			code: 1, stderr: "no-such-dir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := migratetest.NewKafkaStore()
			r := migrate.PartitionRange{LogEnd: 1 << 20}
			k.AddTopic("t0", r, r, r, r)
			args := slices.Clone(c.args)
			for i, a := range args {
				if a == "BACKUP" {
					args[i] = filepath.Join(t.TempDir(), "backup.jsonl")
				}
				if a == "FILE" { // an export of one offset, for restore
					args[i] = filepath.Join(t.TempDir(), "export.csv")
					if err := os.WriteFile(args[i], []byte("g0,t0,0,5\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			stdout, stderr, code := runWith(t, dataDirStores{kafka: k}, nil, args...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout with %q, stderr with %q", code, c.code, stdout, stderr, c.stdout, c.stderr)
			}
			groups, err := k.Groups(context.Background(), []string{"g4"})
			if err != nil {
				t.Fatal(err)
			}
			if got := groups["g4"].Committed[migrate.TopicPartition{Topic: "t0", Partition: 3}]; (got == 30043) != c.written {
				t.Errorf("g4 t0/3 committed %d in Kafka; want the data directory's 30043 written: %v", got, c.written)
			}
		})
	}
}
