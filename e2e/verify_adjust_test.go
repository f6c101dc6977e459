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
