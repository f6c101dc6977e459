package e2e_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestMirrorMakerDualCommit: dual-commit mirrors a legacy consumer's ZooKeeper offsets into the
// MirrorMaker 2 target while the consumer goes on on the source: its first position, then one
// past records replicated after dual-commit started (the offset syncs are read again every
// --mm2-offset-syncs-interval), each time verify --target-kafka matches.
func TestMirrorMakerDualCommit(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	topic := e.unreplicatedStart([]int{200}, []int64{50})
	syncs := e.waitSyncs(topic, []int{200})
	g := e.group()
	e.deleteTargetGroupAtEnd(g)
	first := max(120, firstTranslated(t, syncs, topic, 0, 50, 200, st.MM2OffsetLagMax))
	e.zkOffsets(g, topic, map[int32]int64{0: first})

	// --topic-regex names the source's topic (the target's commits are selected by what they replicate).
	run := e.dualCommit(append([]string{"--group", g, "--topic-regex", "^" + regexp.QuoteMeta(topic) + "$", "--execute",
		"--poll-interval", "200ms", "--resync-interval", "2s", "--mm2-offset-syncs-interval", "1s"}, mm2Args(st)...)...)
	e.waitTargetMatches(g, run)

	e.produce(topic, 200, 300) // the legacy consumer's source goes on; MirrorMaker 2 replicates it
	e.waitSyncs(topic, []int{300})
	e.zkOffsets(g, topic, map[int32]int64{0: 280})
	e.waitTargetMatches(g, run)
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0\n%s", code, run.stderr)
	}
}

// waitTargetMatches waits until verify --target-kafka passes for group g.
func (e *env) waitTargetMatches(g string, run *dualRun) {
	e.t.Helper()
	args := append([]string{"migrate", "verify", "--group", g}, mm2Args(e.st)...)
	deadline := time.Now().Add(replicationWait)
	for {
		r := e.cli(args...)
		if r.code == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the target never matched ZooKeeper within %s:\n%s\n--- dual-commit's log:\n%s", replicationWait, r,
				tail(run.stderr.String(), 4000))
		}
		time.Sleep(500 * time.Millisecond) // polling: the assertion is the verify that passes
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
