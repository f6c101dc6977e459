package e2e_test

import (
	"fmt"
	"maps"
	"testing"
)

// TestBrokerVersionMigration is the migration a legacy cluster's operator runs, on whichever
// broker the stack has: scripts/test runs it on every ZooKeeper-mode release the tool supports
// (the zk profile's 3.9, kafka28's 2.8.2 and kafka21's 2.1.1, the oldest). plan, copy
// --execute, verify and verify --via-topic (which decodes that release's __consumer_offsets
// records itself), Kafka's own consumer-groups tool of the same release as the checker, then
// dual-commit mirroring a change.
func TestBrokerVersionMigration(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10, 10, 10)
	g := e.group()
	offsets := map[int32]int64{0: 2, 1: 6, 2: 10}
	e.zkOffsets(g, topic, offsets)
	plan := e.file("plan")
	e.mustCLI(0, "migrate", "plan", "--group", g, "--out", plan)
	e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup"))
	e.mustCLI(0, "migrate", "verify", "--group", g)
	e.mustCLI(0, "migrate", "verify", "--group", g, "--via-topic")
	if got, w := e.st.DescribeOffsets(t, g), want(topic, offsets); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s (%s): %v, want %v", g, e.st.Profile, got, w)
	}
	run := e.dualCommit("--group", g, "--execute")
	e.zkOffsets(g, topic, map[int32]int64{1: 8})
	waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", e.offsets(g), run.stderr) }, func() bool { return e.offsets(g)[topic+"/1"] == 8 })
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit: exit %d\n%s", code, run.stderr)
	}
}
