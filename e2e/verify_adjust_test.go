package e2e_test

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/verify"
)

// TestVerifyOffsetAdjust copies with --offset-adjust 1 into the real Kafka, then verifies as an
// operator would: without the adjust, the copy's +1 must fail as adjust-mismatch (it used to pass
// as "Kafka 1 ahead: consumers moved on" while a consumer starting there skipped a record); with
// the same adjust it is an exact match, --strict included. Both Kafka read paths (OffsetFetch and
// __consumer_offsets decoded) carry the metadata the verdict is read from. Once a consumer
// commits on its own, the lead is consumer progress again.
func TestVerifyOffsetAdjust(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(200, 200)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 150, 1: 40})
	e.mustCLI(0, "migrate", "copy", "--group", g, "--offset-adjust", "1", "--execute", "--backup", e.file("backup"))

	for _, via := range [][]string{nil, {"--via-topic"}} {
		args := append([]string{"migrate", "verify", "--group", g, "-o", "json"}, via...)
		rep := decodeJSON[verify.Report](t, e.mustCLI(2, args...))
		for _, p := range rep.Groups[0].Partitions {
			if p.Status != verify.StatusAdjustMismatch || p.CopyAdjust == nil || *p.CopyAdjust != 1 || !strings.Contains(p.Reason, "skips 1 record") {
				t.Errorf("verify %v: %s/%d: %s copy adjust %v %q, want adjust-mismatch from a +1 copy", via, p.Topic, p.Partition, p.Status, p.CopyAdjust, p.Reason)
			}
		}
		args = append([]string{"migrate", "verify", "--group", g, "--offset-adjust", "1", "--strict", "-o", "json"}, via...)
		rep = decodeJSON[verify.Report](t, e.mustCLI(0, args...))
		if s := rep.Summary; s.ByStatus[verify.StatusMatch] != 2 || s.Partitions != 2 {
			t.Errorf("verify %v --offset-adjust 1: %+v, want 2 matches", via, s)
		}
	}

	// A consumer on Kafka commits past the copy (its own metadata): consumer progress, which the
	// default verify lets pass.
	e.kafkaCommit(g, topic, "consumer", map[int32]int64{0: 180, 1: 60})
	rep := decodeJSON[verify.Report](t, e.mustCLI(0, "migrate", "verify", "--group", g, "--offset-adjust", "1", "-o", "json"))
	if s := rep.Summary; s.ByStatus[verify.StatusKafkaAhead] != 2 {
		t.Errorf("after consumer commits: %+v, want 2 kafka-ahead", s)
	}
}

// TestExportRestoreOffsetAdjust carries an adjust through the archive path on the real stores:
// export --offset-adjust 1 writes znode + 1 and says so; restore --to kafka writes it as it is
// and records the adjust in the commits, so verify --offset-adjust 1 --strict passes and the
// default verify flags the +1; restore --to zk of the same file writes the znode values back,
// never the adjusted ones; an adjust on top of an adjusted export is refused with nothing
// written; and Kafka's offsets roll back into ZooKeeper with the adjust taken off.
func TestExportRestoreOffsetAdjust(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(200, 200)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 150, 1: 40})
	file := e.file("export.json")
	e.mustCLI(0, "export", "--group", g, "--offset-adjust", "1", "--file", file)

	r := e.cli("restore", "--to", "kafka", "--file", file, "--offset-adjust", "1", "--execute", "--backup", e.file("b0"))
	if r.code != 1 || !strings.Contains(r.stderr, "already applied --offset-adjust +1") {
		t.Fatalf("adjusting an adjusted export: %s", r)
	}
	if got := e.committed(g); len(got) != 0 {
		t.Fatalf("a refused restore wrote %v", got)
	}
	e.mustCLI(0, "restore", "--to", "kafka", "--file", file, "--execute", "--backup", e.file("b1"))
	if got := e.committed(g); got[tp(topic, 0)].Offset != 151 || got[tp(topic, 1)].Offset != 41 {
		t.Fatalf("kafka after restore: %v, want znode + 1", got)
	}
	e.mustCLI(0, "migrate", "verify", "--group", g, "--offset-adjust", "1", "--strict")
	rep := decodeJSON[verify.Report](t, e.mustCLI(2, "migrate", "verify", "--group", g, "-o", "json"))
	if n := rep.Summary.ByStatus[verify.StatusAdjustMismatch]; n != 2 {
		t.Errorf("default verify after an adjusted restore: %+v, want 2 adjust-mismatch", rep.Summary)
	}

	// Back into ZooKeeper: move the znodes first, so that writing them back is seen.
	e.zkOffsets(g, topic, map[int32]int64{0: 1, 1: 1})
	e.mustCLI(0, "restore", "--to", "zk", "--file", file, "--execute", "--backup", e.file("b2"))
	if got := e.zkOffsetsOf(g); got[tp(topic, 0).String()] != 150 || got[tp(topic, 1).String()] != 40 {
		t.Fatalf("zookeeper after restore --to zk: %v, want the znode values 150 and 40", got)
	}

	// The rollback of such a client: Kafka's offsets (151, 41) go back to ZooKeeper one below.
	e.zkOffsets(g, topic, map[int32]int64{0: 1, 1: 1})
	kafkaFile := e.file("kafka.json")
	e.mustCLI(0, "export", "--from", "kafka", "--group", g, "--file", kafkaFile)
	e.mustCLI(0, "restore", "--to", "zk", "--file", kafkaFile, "--offset-adjust", "1", "--execute", "--backup", e.file("b3"))
	if got := e.zkOffsetsOf(g); got[tp(topic, 0).String()] != 150 || got[tp(topic, 1).String()] != 40 {
		t.Fatalf("zookeeper after the rollback of Kafka's offsets with --offset-adjust 1: %v, want 150 and 40", got)
	}
}
