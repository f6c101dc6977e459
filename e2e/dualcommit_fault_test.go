package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestDualCommitSurvivesRestarts restarts the Kafka broker and then ZooKeeper under a running
// dual-commit (on a stack of the test's own): a ZooKeeper change made while Kafka restarts,
// and one made after each restart, still reach Kafka, Kafka never moves backwards, and the
// process stops cleanly. Opt-in (ZK2KAFKA_FAULTS=1): a stack of its own and two restarts cost about
// a minute.
func TestDualCommitSurvivesRestarts(t *testing.T) {
	if os.Getenv(envFaults) != "1" {
		t.Skipf("fault test: restarts a stack of its own; set %s=1 to run it", envFaults)
	}
	st := stacktest.Private(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	topic := e.topic(100, 100)
	g := e.group()
	set := func(off int64) {
		t.Helper()
		m := map[migrate.TopicPartition]int64{tp(topic, 0): off, tp(topic, 1): off}
		var err error
		for deadline := time.Now().Add(dualWait); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = e.zr.WriteOffsets(ctx, g, m)
			cancel()
			if err == nil {
				return
			}
		}
		t.Fatalf("write zookeeper offsets %d: %v", off, err)
	}
	reach := func(off int64, after string, run *dualRun) {
		t.Helper()
		w := want(topic, map[int32]int64{0: off, 1: off})
		got := map[string]int64{}
		waitFor(t, func() string { return fmt.Sprintf("after %s: kafka %v, want %v\n%s", after, got, w, run.stderr) },
			func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := e.kw.FetchCommitted(ctx, g)
				if err != nil {
					return false // the broker is still coming back
				}
				clear(got)
				for k, v := range c {
					got[k.String()] = v.Offset
				}
				return maps.Equal(got, w)
			})
	}
	set(10)
	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "200ms")
	mono := e.watchMonotonic(g)
	reach(10, "the start", run)

	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		restart(t, st, "kafka")
	}()
	time.Sleep(time.Second) // into the broker's shutdown; whether it lands there or not, it must arrive
	set(20)
	<-restarted
	reach(20, "a change during the Kafka restart", run)
	set(30)
	reach(30, "a change after the Kafka restart", run)

	restart(t, st, "zookeeper")
	set(40)
	reach(40, "a change after the ZooKeeper restart", run)

	mono.check(t)
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0\n%s", code, run.stderr)
	}
	t.Logf("dual-commit log:\n%s", run.stderr) // with -v: what the restarts looked like
}

// restart stops one process of st and starts it again on the same port and data.
func restart(t *testing.T, st *stacktest.Stack, service string) {
	t.Helper()
	if err := st.Restart(service, 0, false); err != nil {
		t.Fatal(err)
	}
}
