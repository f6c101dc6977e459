package e2e_test

import (
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
)

// TestDualCommitRollover is the rollover dual-commit exists for, on the real stack, group by
// group: a legacy consumer commits into ZooKeeper while dual-commit mirrors into Kafka; it
// stops, and a real sarama consumer group takes over from exactly where it was (no record lost,
// none processed twice); the group turns kafka-primary, Kafka never moves backwards, and
// --reverse carries the new consumer's progress back into ZooKeeper for a rollback. The second
// group stays zk-primary, mirrored, while the first has moved, then moves too.
func TestDualCommitRollover(t *testing.T) {
	e := newEnv(t)
	const records = 200
	topic := e.topic(records, records)
	groups := []string{e.group(), e.group()}
	unregister := map[string]func() error{}
	for _, g := range groups {
		e.zkOffsets(g, topic, map[int32]int64{0: 0, 1: 0})
		var err error
		unregister[g], err = e.zr.RegisterLiveConsumer(e.ctx(), g, g+"_legacy-1", []migrate.TopicPartition{tp(topic, 0), tp(topic, 1)})
		if err != nil {
			t.Fatal(err)
		}
	}
	run := e.dualCommit("--group", groups[0], "--group", groups[1], "--execute", "--reverse", "--poll-interval", "200ms")
	for i, g := range groups {
		mono := e.watchMonotonic(g)
		e.rollover(run, g, topic, records, unregister[g], i == 0)
		mono.check(t)
		if i == 0 {
			run.waitMetric(t, phaseLine(groups[1], "zk-primary"))
		}
	}
	// The first group's consumer left: it stays kafka-primary (it is not ZooKeeper's again
	// until legacy consumers come back).
	run.waitMetric(t, phaseLine(groups[0], "kafka-primary"))
	if code, body := run.healthz(t); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0\n%s", code, run.stderr)
	}
	if !strings.Contains(run.stderr.String(), "dual-commit stopped") {
		t.Errorf("no clean stop in the log:\n%s", run.stderr)
	}
}

func phaseLine(g, phase string) string {
	return fmt.Sprintf(`zk2kafka_dual_commit_phase{group=%q,phase=%q} 1`, g, phase)
}

// rollover moves group g from its legacy consumer to a sarama consumer group member: the legacy
// consumer commits up to half the records, leaves; the member processes the rest and commits.
func (e *env) rollover(run *dualRun, g, topic string, records int64, unregister func() error, withTool bool) {
	t := e.t
	t.Helper()
	const batch = 10
	legacyEnd := records / 2
	// The legacy consumer: processes records and commits its position into ZooKeeper as the
	// Scala consumer did, a few records at a time.
	for off := int64(5); off <= legacyEnd; off += 5 {
		e.zkOffsets(g, topic, map[int32]int64{0: off, 1: off})
		time.Sleep(20 * time.Millisecond) // the consumer's processing time
	}
	wantLegacy := want(topic, map[int32]int64{0: legacyEnd, 1: legacyEnd})
	waitFor(t, func() string {
		return fmt.Sprintf("%s: kafka %v, want %v\n%s", g, e.offsets(g), wantLegacy, run.stderr)
	},
		func() bool { return maps.Equal(e.offsets(g), wantLegacy) })
	if withTool {
		if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, wantLegacy) {
			t.Errorf("%s: Kafka's consumer-groups tool: %v, want %v", g, got, wantLegacy)
		}
	}
	run.waitMetric(t, phaseLine(g, "zk-primary"))

	// Roll over: the legacy consumer leaves, a Kafka consumer group member takes its place.
	if err := unregister(); err != nil {
		t.Fatal(err)
	}
	h := newCommitting(batch)
	member := e.join(g, []string{topic}, h)
	run.waitMetric(t, phaseLine(g, "kafka-primary"))
	wantEnd := want(topic, map[int32]int64{0: records, 1: records})
	waitFor(t, func() string { return fmt.Sprintf("%s: kafka %v, want %v", g, e.offsets(g), wantEnd) },
		func() bool { return maps.Equal(e.offsets(g), wantEnd) })
	for _, p := range []int32{0, 1} {
		k := tp(topic, p)
		start, ok := h.start(k)
		if !ok || start != legacyEnd {
			t.Errorf("%s %s: the Kafka consumer started at %d (claimed %v), want %d where the legacy consumer stopped", g, k, start, ok, legacyEnd)
		}
		var wantSeen []int64
		for o := legacyEnd; o < records; o++ {
			wantSeen = append(wantSeen, o)
		}
		if got := h.processed(k); !slices.Equal(got, wantSeen) {
			t.Errorf("%s %s: processed %d records %v..., want each of %d..%d once", g, k, len(got), head(got), legacyEnd, records-1)
		}
	}
	// --reverse: ZooKeeper follows the Kafka consumer, so a rollback would resume there too.
	waitFor(t, func() string {
		return fmt.Sprintf("%s: zookeeper %v, want %v\n%s", g, e.zkOffsetsOf(g), wantEnd, run.stderr)
	},
		func() bool { return maps.Equal(e.zkOffsetsOf(g), wantEnd) })
	member.close()
}

func head(v []int64) []int64 { return v[:min(len(v), 5)] }

// zkOffsetsOf is a group's ZooKeeper offsets keyed "topic/partition".
func (e *env) zkOffsetsOf(group string) map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	err := e.zr.ReadGroups(e.ctx(), []string{group}, func(lg migrate.LegacyGroup) error {
		for _, o := range lg.Offsets {
			if o.Invalid == "" {
				out[tp(o.Topic, o.Partition).String()] = o.Offset
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestDualCommitSIGTERM runs the real binary: a ZooKeeper change is mirrored, SIGHUP resyncs
// without stopping it, and SIGTERM ends the process with exit 0 after the flush.
func TestDualCommitSIGTERM(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(50)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 10})
	bin := filepath.Join(t.TempDir(), "zk2kafka")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = stacktest.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stderr := &lockedBuffer{}
	p := exec.Command(bin, "--zk", e.zkURL, "--kafka", e.st.Kafka, "migrate", "dual-commit", "--group", g, "--execute")
	p.Stderr = stderr
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.Wait() }()
	t.Cleanup(func() {
		if p.ProcessState == nil {
			p.Process.Kill() //nolint:errcheck // cleanup after a failed test
		}
	})
	w10 := want(topic, map[int32]int64{0: 10})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v\n%s", e.offsets(g), stderr) },
		func() bool { return maps.Equal(e.offsets(g), w10) })
	e.zkOffsets(g, topic, map[int32]int64{0: 20})
	w20 := want(topic, map[int32]int64{0: 20})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v\n%s", e.offsets(g), stderr) },
		func() bool { return maps.Equal(e.offsets(g), w20) })
	// SIGHUP resyncs and the process goes on: a change after it is still mirrored.
	if err := p.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string { return "no resync logged after SIGHUP\n" + stderr.String() },
		func() bool { return strings.Contains(stderr.String(), "SIGHUP: resyncing") })
	e.zkOffsets(g, topic, map[int32]int64{0: 25})
	w25 := want(topic, map[int32]int64{0: 25})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v after SIGHUP\n%s", e.offsets(g), stderr) },
		func() bool { return maps.Equal(e.offsets(g), w25) })
	if err := p.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("dual-commit after SIGTERM: %v\n%s", err, stderr)
		}
	case <-time.After(dualWait):
		t.Fatalf("dual-commit did not exit within %s of SIGTERM\n%s", dualWait, stderr)
	}
	if !strings.Contains(stderr.String(), "dual-commit stopped") {
		t.Errorf("no clean stop in the log:\n%s", stderr)
	}
}

// TestDualCommitSwitching: a Kafka consumer joins while the legacy consumer is still registered
// (an instance rolled over before the others): the group is switching, no admin commit is tried
// into the active group (no refusals, no errors), and once the Kafka member leaves, ZooKeeper's
// progress meanwhile reaches Kafka.
func TestDualCommitSwitching(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(100)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 10})
	unregister, err := e.zr.RegisterLiveConsumer(e.ctx(), g, g+"_legacy-1", []migrate.TopicPartition{tp(topic, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unregister(); err != nil {
			t.Errorf("unregister the legacy consumer: %v", err)
		}
	})
	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "200ms")
	w10 := want(topic, map[int32]int64{0: 10})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), w10, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), w10) })
	member := e.join(g, []string{topic}, idle{})
	run.waitMetric(t, phaseLine(g, "switching"))
	e.zkOffsets(g, topic, map[int32]int64{0: 20}) // the legacy instance goes on committing
	// The mirror has read ZooKeeper's 20 and decided once Kafka's lag shows it (measured after
	// its own writes): a commit of 20 would have made it 0.
	run.waitMetric(t, fmt.Sprintf("zk2kafka_dual_commit_lag_offsets{group=%q} 10\n", g))
	if got := e.offsets(g); !maps.Equal(got, w10) {
		t.Errorf("kafka %v while its group is active, want %v untouched", got, w10)
	}
	member.close()
	w20 := want(topic, map[int32]int64{0: 20})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), w20, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), w20) })
	run.waitMetric(t, phaseLine(g, "zk-primary"))
	m := run.metricsText()
	for _, series := range []string{"zk2kafka_dual_commit_refused_total", "zk2kafka_dual_commit_errors_total"} {
		if strings.Contains(m, series+"{") {
			t.Errorf("%s is not zero:\n%s", series, m)
		}
	}
}

// TestDualCommitKeepalive reads __consumer_offsets itself (package offsetlog, not OffsetFetch):
// with --keepalive-interval 1s the unchanged offset is committed again and again, each record
// with a later commit time and the same offset, so its retention clock restarts.
func TestDualCommitKeepalive(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 7})
	r, err := offsetlog.Open(e.ctx(), offsetlog.Config{Bootstrap: []string{e.st.Kafka}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close the __consumer_offsets reader: %v", err)
		}
	})
	read := func() (offsetlog.Committed, bool) {
		offs, _, err := r.ReadGroups(e.ctx(), []string{g})
		if err != nil {
			return offsetlog.Committed{}, false // e.g. no __consumer_offsets yet
		}
		c, ok := offs[g][tp(topic, 0)]
		return c, ok
	}
	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "200ms", "--keepalive-interval", "1s")
	var first offsetlog.Committed
	waitFor(t, func() string { return fmt.Sprintf("no commit of %s in %s\n%s", g, offsetlog.Topic, run.stderr) },
		func() bool { c, ok := read(); first = c; return ok })
	var later offsetlog.Committed
	waitFor(t, func() string { return fmt.Sprintf("commit %+v never renewed after %+v\n%s", later, first, run.stderr) },
		func() bool {
			later, _ = read()
			return later.LogOffset > first.LogOffset && later.CommitTimestamp.After(first.CommitTimestamp)
		})
	if first.Offset != 7 || later.Offset != 7 {
		t.Errorf("offsets %d then %d, want 7 kept", first.Offset, later.Offset)
	}
	run.waitMetric(t, fmt.Sprintf(`zk2kafka_dual_commit_writes_total{direction="zk-to-kafka",dry_run="false",group=%q,reason="keepalive"}`, g))
}
