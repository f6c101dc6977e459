package e2e_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/verify"
)

// TestDualCommitBlocksWhatPlanBlocks: dual-commit --execute decides each write as plan does. A
// ZooKeeper offset above the partition's log end (what plan blocks as above-log-end) is never
// committed into Kafka, while the group's other partition is mirrored in the same syncs; verify
// then reports the partition (missing-in-kafka, exit 2) instead of a match. Under
// --out-of-range=clamp the same offset is written as the log end.
func TestDualCommitBlocksWhatPlanBlocks(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10, 10) // log end 10 in both partitions
	blocked, clamped := e.group(), e.group()
	for _, g := range []string{blocked, clamped} {
		e.deleteGroupAtEnd(g)
		e.zkOffsets(g, topic, map[int32]int64{0: 5, 1: 50})
	}

	run := e.dualCommit("--group", blocked, "--execute", "--poll-interval", "200ms")
	// Partition 0 is mirrored by the sync that decides partition 1: once Kafka holds 5 and then
	// 7, two syncs have decided partition 1.
	for _, off := range []int64{5, 7} {
		e.zkOffsets(blocked, topic, map[int32]int64{0: off})
		w := want(topic, map[int32]int64{0: off})
		waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(blocked), w, run.stderr) },
			func() bool { return e.offsets(blocked)[tp(topic, 0).String()] == off })
		if got := e.offsets(blocked); !maps.Equal(got, w) {
			t.Fatalf("kafka %v, want %v: the offset above the log end was mirrored\n%s", got, w, run.stderr)
		}
	}
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0 (a blocked partition is not a failed write)\n%s", code, run.stderr)
	}
	r := e.mustCLI(2, "migrate", "verify", "--group", blocked, "-o", "json")
	rep := decodeJSON[verify.Report](t, r)
	if got := statusLines(rep); !equalLines(got, []string{
		fmt.Sprintf("%s %s/0 match", blocked, topic), fmt.Sprintf("%s %s/1 missing-in-kafka", blocked, topic)}) {
		t.Errorf("verify: %q\n%s", got, r)
	}

	run = e.dualCommit("--group", clamped, "--execute", "--out-of-range", "clamp", "--poll-interval", "200ms")
	wc := want(topic, map[int32]int64{0: 5, 1: 10})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(clamped), wc, run.stderr) },
		func() bool { return maps.Equal(e.offsets(clamped), wc) })
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit --out-of-range clamp stopped with exit %d, want 0\n%s", code, run.stderr)
	}
}

// TestVerifyKafkaOutsideTheLog: a Kafka commit above the log end, or below the log start, fails
// verify (exit 2) even where ZooKeeper holds the same offset, in every output format.
func TestVerifyKafkaOutsideTheLog(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10, 10)
	e.raiseLogStart(topic, 1, 8)
	g := e.group()
	e.deleteGroupAtEnd(g)
	both := map[int32]int64{0: 50, 1: 3} // 50 above the log end 10; 3 below the log start 8
	e.zkOffsets(g, topic, both)
	e.kafkaCommit(g, topic, "e2e", both)

	rep := decodeJSON[verify.Report](t, e.mustCLI(2, "migrate", "verify", "--group", g, "-o", "json"))
	if rep.Pass || len(rep.Groups) != 1 || rep.Groups[0].Verdict != verify.VerdictFail || len(rep.Groups[0].Partitions) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for i, want := range []struct{ start, end int64 }{{0, 10}, {8, 10}} {
		p := rep.Groups[0].Partitions[i]
		if p.Status != verify.StatusKafkaOutOfRange || p.OK || p.LogStart == nil || *p.LogStart != want.start || *p.LogEnd != want.end {
			t.Errorf("%s/%d: %+v, want kafka-out-of-range in the log [%d, %d]", p.Topic, p.Partition, p, want.start, want.end)
		}
	}
	table := e.mustCLI(2, "migrate", "verify", "--group", g)
	for _, w := range []string{"kafka-out-of-range", "above the log end 10", "below the log start 8", "The stores agree, but Kafka's offsets are outside the log"} {
		if !strings.Contains(table.stdout, w) {
			t.Errorf("table lacks %q:\n%s", w, table.stdout)
		}
	}
	if !strings.Contains(table.stderr, "Kafka holds committed offsets outside the partitions' logs") {
		t.Errorf("stderr: %s", table.stderr)
	}
	junit := e.mustCLI(2, "migrate", "verify", "--group", g, "-o", "junit")
	if n := strings.Count(junit.stdout, `type="kafka-out-of-range"`); n != 2 {
		t.Errorf("%d kafka-out-of-range failures in the JUnit document, want 2:\n%s", n, junit.stdout)
	}
}

func equalLines(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }
