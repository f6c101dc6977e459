package e2e_test

import (
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestDualCommitGroupCreatedLater: a legacy group that first appears in ZooKeeper after
// dual-commit started is watched and mirrored at once (the resync is 5 minutes away), so a
// rollover to a sarama consumer group right after loses and repeats nothing; the selection is
// visible (a warning while it is empty, the groups gauge), /readyz is ready on an empty
// selection, and a group deleted from ZooKeeper leaves with its metric series.
func TestDualCommitGroupCreatedLater(t *testing.T) {
	e := newEnv(t)
	const records = 200
	topic := e.topic(records, records)
	// No --group: every group of the test's chroot, which has none yet (not even /consumers).
	run := e.dualCommit("--execute", "--reverse", "--poll-interval", "200ms")
	run.waitMetric(t, "zk2kafka_dual_commit_groups 0")
	run.waitMetric(t, "zk2kafka_dual_commit_ready 1")
	if code, body := run.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz on an empty selection, watches set, lease held: %d %q, want 200", code, body)
	}
	if !strings.Contains(run.stderr.String(), "waiting for a group matching the selection") {
		t.Errorf("no warning while the selection matches nothing:\n%s", run.stderr)
	}

	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 0, 1: 0})
	unregister, err := e.zr.RegisterLiveConsumer(e.ctx(), g, g+"_legacy-1", []migrate.TopicPartition{tp(topic, 0), tp(topic, 1)})
	if err != nil {
		t.Fatal(err)
	}
	mono := e.watchMonotonic(g)
	e.rollover(run, g, topic, records, unregister, true)
	mono.check(t)
	run.waitMetric(t, "zk2kafka_dual_commit_groups 1")
	if !strings.Contains(run.stderr.String(), "msg=selection groups=1 added=1") {
		t.Errorf("the new group's arrival is not logged:\n%s", run.stderr)
	}

	if err := deleteTree(e.raw, path.Join(e.chroot, "consumers", g)); err != nil {
		t.Fatal(err)
	}
	run.waitMetric(t, "zk2kafka_dual_commit_groups 0")
	if m := run.metricsText(); strings.Contains(m, fmt.Sprintf("group=%q", g)) {
		t.Errorf("series of the deleted group %s are still served:\n%s", g, m)
	}
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0\n%s", code, run.stderr)
	}
}

// TestDualCommitNewGroupLatency measures the mirror's latency (a ZooKeeper set until Kafka
// shows it) for a group created after the start beside one known at the start, on the same
// run. It asserts only that every change arrives; the figures are logged (go test -v).
func TestDualCommitNewGroupLatency(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(1000, 1000)
	known := e.group()
	e.zkOffsets(known, topic, map[int32]int64{0: 1})
	run := e.dualCommit("--execute", "--poll-interval", "200ms")
	waitFor(t, func() string { return fmt.Sprintf("%s: kafka %v\n%s", known, e.offsets(known), run.stderr) },
		func() bool { return e.offsets(known)[tp(topic, 0).String()] == 1 })
	later := e.group()
	for _, g := range []string{known, later} {
		var lat []time.Duration
		for i := int64(2); i <= 21; i++ {
			set := time.Now()
			e.zkOffsets(g, topic, map[int32]int64{0: i})
			waitFor(t, func() string { return fmt.Sprintf("%s: kafka %v, want %d\n%s", g, e.offsets(g), i, run.stderr) },
				func() bool { return e.offsets(g)[tp(topic, 0).String()] == i })
			lat = append(lat, time.Since(set))
		}
		t.Logf("mirror latency of %s (%s): first %s, all %v", g, map[bool]string{true: "known at start", false: "created later"}[g == known],
			lat[0].Round(time.Millisecond), lat)
	}
}

// TestDualCommitLagAfterWrite: the lag gauge is measured after the sync's own write, so a
// healthy mirror shows 0 once Kafka has the offset (it used to keep the lag read before the
// write until the next change of the group); a scrape of the real process passes promtool.
func TestDualCommitLagAfterWrite(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(100, 100)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 10, 1: 20})
	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "200ms")
	want := map[string]int64{tp(topic, 0).String(): 10, tp(topic, 1).String(): 20}
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), want, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), want) })
	run.waitMetric(t, fmt.Sprintf(`zk2kafka_dual_commit_lag_offsets{group=%q} 0`, g))
	run.waitMetric(t, fmt.Sprintf(`zk2kafka_dual_commit_missing_partitions{group=%q} 0`, g))
	e.zkOffsets(g, topic, map[int32]int64{0: 15})
	want[tp(topic, 0).String()] = 15
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), want, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), want) })
	run.waitMetric(t, fmt.Sprintf(`zk2kafka_dual_commit_lag_offsets{group=%q} 0`, g))
	run.waitMetric(t, "zk2kafka_dual_commit_mirror_latency_seconds_count 1")
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus; .ci/run installs it)")
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(run.metricsText())
	if out, err := check.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics on a scrape of dual-commit: %v\n%s", err, out)
	}
}
