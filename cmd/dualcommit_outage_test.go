package cmd

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestDualCommitMetricsKafkaOutage: the statuses the mirror reports while Kafka is down move the
// lag gauge and count each pending write as an error with its reason; the batch's failure is
// logged once (SyncFailed), not once per group; the instance stays ready.
func TestDualCommitMetricsKafkaOutage(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	down := fmt.Errorf("read 2 kafka groups: %w", refused)
	tp := func(p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: "t", Partition: p} }
	steps := []struct {
		zk   int64 // ZooKeeper's offset of t/0 and t/1; Kafka's last commit is 10
		lag  string
		errs string
	}{
		{zk: 25, lag: `zk2kafka_dual_commit_lag_offsets{group="g"} 30`,
			errs: `zk2kafka_dual_commit_errors_total{direction="zk-to-kafka",group="g",reason="unreachable"} 2`},
		{zk: 70, lag: `zk2kafka_dual_commit_lag_offsets{group="g"} 120`,
			errs: `zk2kafka_dual_commit_errors_total{direction="zk-to-kafka",group="g",reason="unreachable"} 4`},
	}
	o, logs := testObserver(t, true)
	o.SelectionChanged(mirror.Selection{Groups: []string{"g"}, Added: []string{"g"}})
	o.LoopState(mirror.LoopState{Beat: time.Now(), Synced: true, Armed: true})
	from := int64(10)
	for _, s := range steps {
		o.SyncFailed([]string{"g", "h"}, down)
		o.GroupSynced(mirror.GroupStatus{Group: "g", Phase: mirror.PhaseZKPrimary, Previous: mirror.PhaseZKPrimary,
			Lag: 2 * (s.zk - from), KafkaErr: down, Writes: []mirror.Write{
				{TopicPartition: tp(0), Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, From: &from, To: s.zk, Err: down},
				{TopicPartition: tp(1), Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, From: &from, To: s.zk, Err: down},
			}})
		body := scrape(t, o)
		for _, want := range []string{s.lag, s.errs, `zk2kafka_dual_commit_ready 1`} {
			if !strings.Contains(body, want) {
				t.Errorf("ZooKeeper at %d: metrics lack %s:\n%s", s.zk, want, body)
			}
		}
	}
	// A read of Kafka still waiting sets the lag from the ZooKeeper read alone.
	o.LegacyLag("g", 180)
	if body := scrape(t, o); !strings.Contains(body, `zk2kafka_dual_commit_lag_offsets{group="g"} 180`) {
		t.Errorf("LegacyLag did not set the lag gauge:\n%s", body)
	}
	if n := strings.Count(logs.String(), "writes failed"); n != 0 {
		t.Errorf("%d per-group failure lines for an outage the batch's line reports:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "sync failed"); n != len(steps) {
		t.Errorf("%d sync failure lines, want %d:\n%s", n, len(steps), logs)
	}
}

// TestDualCommitErrorReasons: a failed write is counted under the reason of its error, from the
// fixed set; a refusal of an active group is not an error.
func TestDualCommitErrorReasons(t *testing.T) {
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	cases := []struct {
		name string
		w    mirror.Write
		want string
	}{
		{"missing topic", mirror.Write{Err: fmt.Errorf("commit: %w", migrate.ErrPartitionMissing)},
			`zk2kafka_dual_commit_errors_total{direction="zk-to-kafka",group="g",reason="partition-missing"} 1`},
		{"not from kafka", mirror.Write{Err: fmt.Errorf("no answer for the partition")},
			`zk2kafka_dual_commit_errors_total{direction="zk-to-kafka",group="g",reason="other"} 1`},
		{"reverse write to zookeeper", mirror.Write{Direction: mirror.ToZK, Err: fmt.Errorf("write zookeeper offsets: %w", syscall.ECONNRESET)},
			`zk2kafka_dual_commit_errors_total{direction="kafka-to-zk",group="g",reason="unreachable"} 1`},
		{"refused: active group", mirror.Write{Refused: true}, `zk2kafka_dual_commit_refused_total{group="g"} 1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, _ := testObserver(t, true)
			w := c.w
			w.TopicPartition, w.Reason, w.To = tp, mirror.ReasonMirror, 5
			if w.Direction == "" {
				w.Direction = mirror.ToKafka
			}
			o.GroupSynced(mirror.GroupStatus{Group: "g", Phase: mirror.PhaseZKPrimary, Writes: []mirror.Write{w}})
			body := scrape(t, o)
			if !strings.Contains(body, c.want) {
				t.Errorf("metrics lack %s:\n%s", c.want, body)
			}
			if c.w.Refused && strings.Contains(body, "zk2kafka_dual_commit_errors_total{") {
				t.Errorf("a refusal counted as an error:\n%s", body)
			}
		})
	}
}
