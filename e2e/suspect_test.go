package e2e_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// TestPlanFlagsSuspectOffsets: on the real stores, a znode just written far below its log end
// (what kafka-node 2.6.1 leaves when it rewinds: TestKafkaNodeRewindIsFlagged) is flagged in the plan, with
// the action the policy decided; one near the end is not. The table says how many.
func TestPlanFlagsSuspectOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(1000, 1000)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 3, 1: 995})
	doc := decodeJSON[planDoc](t, e.mustCLI(0, "migrate", "plan", "--group", g, "-o", "json"))
	gp := doc.groupPlan(t, g)
	if len(gp.Entries) != 2 || gp.Entries[0].Suspect == "" || gp.Entries[1].Suspect != "" || doc.Summary.Suspect != 1 {
		t.Fatalf("entries %+v, summary %+v: want partition 0 alone flagged", gp.Entries, doc.Summary)
	}
	if gp.Entries[0].Action != "write" {
		t.Errorf("a suspect offset is flagged, not blocked: action %s", gp.Entries[0].Action)
	}
	if r := e.mustCLI(0, "migrate", "plan", "--group", g); !strings.Contains(r.stdout, "Suspect: 1 ZooKeeper offset(s)") {
		t.Errorf("the table does not say it:\n%s", r.stdout)
	}
}

// TestDualCommitFlagsRewinds: a legacy offset that goes backwards while dual-commit runs is
// counted and logged, and Kafka keeps the higher offset.
func TestDualCommitFlagsRewinds(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(100)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 50})
	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "200ms")
	w50 := want(topic, map[int32]int64{0: 50})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), w50, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), w50) })
	e.zkOffsets(g, topic, map[int32]int64{0: 0})
	run.waitMetric(t, fmt.Sprintf("zk2kafka_dual_commit_legacy_rewinds_total{group=%q} 1\n", g))
	if got := e.offsets(g); !maps.Equal(got, w50) {
		t.Errorf("kafka %v after the rewind, want %v kept", got, w50)
	}
	if !strings.Contains(run.stderr.String(), "went backwards") {
		t.Errorf("the rewind is not logged:\n%s", run.stderr)
	}
}
