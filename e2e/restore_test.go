package e2e_test

import (
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// restoreDoc is restore --output json.
type restoreDoc struct {
	Backup string                         `json:"backup"`
	Plan   archive.Plan                   `json:"restore"`
	Counts map[copier.PartitionStatus]int `json:"counts"`
}

// readExport parses a file the command line wrote, as restore will, into key -> offset.
func readExport(t *testing.T, path string) (archive.File, map[migrate.Key]int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := archive.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	out := map[migrate.Key]int64{}
	for _, en := range f.Entries {
		out[en.Key] = *en.Offset
	}
	return f, out
}

// freshChroot makes an empty ZooKeeper chroot of its own, deleted at the end, and returns the
// connect string for it.
func (e *env) freshChroot(prefix string) string {
	e.t.Helper()
	root := "/" + stacktest.Name(e.t, prefix)
	e.ensure(root)
	e.t.Cleanup(func() {
		if err := deleteTree(e.raw, root); err != nil {
			e.t.Errorf("delete chroot %s: %v", root, err)
		}
	})
	return e.st.ZK + root
}

// TestExportRestoreRoundTrip exports ZooKeeper, restores it into Kafka (verify then passes
// strictly, and Kafka's own consumer-groups tool shows the ZooKeeper offsets), exports Kafka as
// JSON and as CSV, restores each into a fresh ZooKeeper chroot, and checks that verify passes
// there and that a new export of it equals the first one: nothing lost, nothing added.
func TestExportRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(20, 20)
	g1, g2 := e.group(), e.group()
	e.zkOffsets(g1, topic, map[int32]int64{0: 5, 1: 7})
	e.zkOffsets(g2, topic, map[int32]int64{0: 11})

	zkFile := e.file("zk") + ".json"
	e.mustCLI(0, "export", "--file", zkFile)
	f, zkOffsets := readExport(t, zkFile)
	if f.Source != archive.SourceZK || len(zkOffsets) != 3 {
		t.Fatalf("zk export: %+v", f)
	}
	for _, en := range f.Entries {
		if en.Mtime.IsZero() {
			t.Errorf("%s: no znode mtime in the export", en.Key)
		}
	}

	d := decodeJSON[restoreDoc](t, e.mustCLI(0, "restore", "--to", "kafka", "--file", zkFile, "-o", "json"))
	if d.Counts[copier.StatusWouldWrite] != 3 || len(e.offsets(g1)) != 0 {
		t.Fatalf("dry run: %+v, kafka %v", d.Counts, e.offsets(g1))
	}
	d = decodeJSON[restoreDoc](t, e.mustCLI(0, "restore", "--to", "kafka", "--file", zkFile, "--execute", "--backup", e.file("b"), "-o", "json"))
	if d.Counts[copier.StatusWritten] != 3 {
		t.Fatalf("restore to kafka: %+v", d)
	}
	for g, w := range map[string]map[string]int64{g1: want(topic, map[int32]int64{0: 5, 1: 7}), g2: want(topic, map[int32]int64{0: 11})} {
		if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, w) {
			t.Errorf("consumer-groups --describe %s: %v, want %v", g, got, w)
		}
	}
	e.mustCLI(0, "migrate", "verify", "--strict")

	kafkaJSON, kafkaCSV := e.file("kafka")+".json", e.file("kafka")+".csv"
	e.mustCLI(0, "export", "--from", "kafka", "--file", kafkaJSON)
	e.mustCLI(0, "export", "--from", "kafka", "--format", "csv", "--file", kafkaCSV)
	for _, file := range []string{kafkaJSON, kafkaCSV} {
		if _, got := readExport(t, file); !maps.Equal(got, zkOffsets) {
			t.Fatalf("%s: %v, want the ZooKeeper offsets %v", file, got, zkOffsets)
		}
		zkB := e.freshChroot("e2e-restore")
		if r := e.cliAt(zkB, "restore", "--to", "zk", "--file", file, "--execute", "--backup", e.file("zkb")+".json"); r.code != 0 {
			t.Fatalf("restore %s to a fresh chroot: %s", file, r)
		}
		if r := e.cliAt(zkB, "migrate", "verify", "--strict", "-o", "json"); r.code != 0 {
			t.Fatalf("verify in the restored chroot: %s", r)
		}
		again := e.file("again") + ".json"
		if r := e.cliAt(zkB, "export", "--file", again); r.code != 0 {
			t.Fatalf("export of the restored chroot: %s", r)
		}
		if _, got := readExport(t, again); !maps.Equal(got, zkOffsets) {
			t.Errorf("restored from %s: ZooKeeper holds %v, want %v", file, got, zkOffsets)
		}
	}
}

// TestRestoreBackupPutsKafkaBack copies over existing Kafka commits, then restores the copy's
// backup: the earlier commits are back (checked with Kafka's own tool), the partition Kafka had
// no commit for is reported as not restorable, and the restore's own backup undoes the undo.
func TestRestoreBackupPutsKafkaBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(20, 20, 20)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 8, 1: 9, 2: 10})
	before := map[int32]int64{0: 2, 1: 3}
	e.kafkaCommit(g, topic, "e2e", before)
	copyBackup := e.file("copy-backup")
	e.mustCLI(0, "migrate", "copy", "--execute", "--backup", copyBackup)
	copied := want(topic, map[int32]int64{0: 8, 1: 9, 2: 10})
	if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, copied) {
		t.Fatalf("after copy: %v, want %v", got, copied)
	}

	undoBackup := e.file("undo-backup")
	r := e.mustCLI(2, "restore", "--to", "kafka", "--file", copyBackup, "--execute", "--backup", undoBackup, "-o", "json")
	d := decodeJSON[restoreDoc](t, r)
	if d.Counts[copier.StatusWritten] != 2 || d.Counts[copier.StatusBlocked] != 1 {
		t.Fatalf("restore of the copy backup: %+v\n%s", d.Counts, r)
	}
	if it := d.Plan.Groups[0].Items[2]; it.Partition != 2 || !strings.Contains(it.Reason, "not restorable") {
		t.Errorf("partition 2: %+v", it)
	}
	if got, w := e.st.DescribeOffsets(t, g), want(topic, map[int32]int64{0: 2, 1: 3, 2: 10}); !maps.Equal(got, w) {
		t.Errorf("after the restore: %v, want %v", got, w)
	}
	e.mustCLI(0, "restore", "--to", "kafka", "--file", undoBackup, "--execute", "--backup", e.file("b3"))
	if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, copied) {
		t.Errorf("after undoing the restore: %v, want %v", got, copied)
	}
}

// TestRestoreGates: Kafka refuses nothing here because restore asks first: an active Kafka
// group is never written, a group with a live legacy consumer only --to zk with --force.
func TestRestoreGates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 4})
	file := e.file("r") + ".csv"
	if err := os.WriteFile(file, []byte(g+","+topic+",0,6\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	m := e.join(g, []string{topic}, idle{})
	r := e.mustCLI(2, "restore", "--to", "kafka", "--file", file, "--execute", "--backup", e.file("b"))
	if !strings.Contains(r.stdout, string(migrate.GateKafkaGroupActive)) || len(e.offsets(g)) != 0 {
		t.Errorf("active group: want it gated and nothing committed (kafka %v)\n%s", e.offsets(g), r)
	}
	m.close()

	cleanup, err := e.zr.RegisterLiveConsumer(e.ctx(), g, "c1", []migrate.TopicPartition{tp(topic, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Errorf("remove the live registration: %v", err)
		}
	})
	e.mustCLI(2, "restore", "--to", "kafka", "--file", file, "--execute", "--backup", e.file("b"))
	e.mustCLI(2, "restore", "--to", "zk", "--file", file, "--execute", "--backup", e.file("b"))
	if _, got := exportZK(e); got[migrate.Key{Group: g, Topic: topic, Partition: 0}] != 4 {
		t.Errorf("zk after refused restores: %v, want 4 untouched", got)
	}
	e.mustCLI(0, "restore", "--to", "zk", "--file", file, "--execute", "--force", "--backup", e.file("b"))
	if _, got := exportZK(e); got[migrate.Key{Group: g, Topic: topic, Partition: 0}] != 6 {
		t.Errorf("zk after the forced restore: %v, want 6", got)
	}
	if len(e.offsets(g)) != 0 {
		t.Errorf("kafka was written: %v", e.offsets(g))
	}
}

// exportZK exports the test's chroot and parses the file.
func exportZK(e *env) (archive.File, map[migrate.Key]int64) {
	e.t.Helper()
	f := e.file("export") + ".json"
	e.mustCLI(0, "export", "--file", f)
	return readExport(e.t, f)
}
