package offsetlog_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v5"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
)

// txn drives Kafka's transaction protocol by hand (sarama's producer sends transactional
// offsets only inside CommitTxn, so it can neither abort them nor leave them open).
type txn struct {
	e     *env
	id    string
	pid   int64
	epoch int16
	ended int // transactions ended so far: markers expected
}

func (e *env) beginTxn(t *testing.T) *txn {
	t.Helper()
	x := &txn{e: e, id: stacktest.Name(t, "txn")}
	ctx := testCtx(t, time.Minute)
	// The first use of transactions creates __transaction_state: retry until it has a leader.
	resp, err := backoff.Retry(ctx, func() (*sarama.InitProducerIDResponse, error) {
		tc, err := e.sc.TransactionCoordinator(x.id)
		if err != nil {
			return nil, err
		}
		resp, err := tc.InitProducerID(&sarama.InitProducerIDRequest{Version: 3, TransactionalID: &x.id,
			TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1})
		if err == nil && resp.Err != sarama.ErrNoError {
			err = resp.Err
		}
		return resp, err
	}, backoff.WithMaxElapsedTime(time.Minute))
	if err != nil {
		t.Fatalf("init producer id for %s: %v", x.id, err)
	}
	x.pid, x.epoch = resp.ProducerID, resp.ProducerEpoch
	return x
}

// commitOffset adds one transactional offset commit of group for topic/0.
func (x *txn) commitOffset(t *testing.T, group, topic string, off int64) {
	t.Helper()
	tc, err := x.e.sc.TransactionCoordinator(x.id)
	if err != nil {
		t.Fatal(err)
	}
	// CONCURRENT_TRANSACTIONS: the previous transaction is still being completed.
	_, err = backoff.Retry(testCtx(t, time.Minute), func() (struct{}, error) {
		add, err := tc.AddOffsetsToTxn(&sarama.AddOffsetsToTxnRequest{Version: 2, TransactionalID: x.id,
			ProducerID: x.pid, ProducerEpoch: x.epoch, GroupID: group})
		if err == nil && add.Err != sarama.ErrNoError {
			err = add.Err
		}
		if err != nil && !errors.Is(err, sarama.ErrConcurrentTransactions) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithMaxElapsedTime(time.Minute))
	if err != nil {
		t.Fatalf("add offsets of group %s to transaction %s: %v", group, x.id, err)
	}
	gc, err := x.e.sc.Coordinator(group)
	if err != nil {
		t.Fatal(err)
	}
	meta := "txn"
	resp, err := gc.TxnOffsetCommit(&sarama.TxnOffsetCommitRequest{Version: 3, TransactionalID: x.id, GroupID: group,
		ProducerID: x.pid, ProducerEpoch: x.epoch, GenerationID: -1,
		Topics: map[string][]*sarama.PartitionOffsetMetadata{topic: {{Partition: 0, Offset: off, LeaderEpoch: -1, Metadata: &meta}}}})
	if err != nil {
		t.Fatalf("transactional commit of group %s: %v", group, err)
	}
	for _, ps := range resp.Topics {
		for _, p := range ps {
			if p.Err != sarama.ErrNoError {
				t.Fatalf("transactional commit of group %s partition %d: %v", group, p.Partition, p.Err)
			}
		}
	}
}

// end ends the transaction and waits until its marker is in the group's partition: the
// transaction coordinator writes markers after EndTxn returns.
func (x *txn) end(t *testing.T, group string, commit bool) {
	t.Helper()
	tc, err := x.e.sc.TransactionCoordinator(x.id)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tc.EndTxn(&sarama.EndTxnRequest{Version: 2, TransactionalID: x.id, ProducerID: x.pid,
		ProducerEpoch: x.epoch, TransactionResult: commit})
	if err != nil || resp.Err != sarama.ErrNoError {
		t.Fatalf("end transaction %s (commit %v): %v %v", x.id, commit, err, resp)
	}
	x.ended++
	part := offsetlog.Partition(group, x.e.parts)
	_, err = backoff.Retry(testCtx(t, time.Minute), func() (struct{}, error) {
		if n := x.e.markers(t, part, x.pid); n < x.ended {
			return struct{}{}, fmt.Errorf("%d of %d markers of producer %d written", n, x.ended, x.pid)
		}
		return struct{}{}, nil
	}, backoff.WithMaxElapsedTime(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
}

// markers counts the transaction markers of a producer in partition p of __consumer_offsets.
func (e *env) markers(t *testing.T, p int32, pid int64) int {
	n := 0
	for _, r := range e.rawRecords(t, p) {
		if r.control && r.producerID == pid {
			n++
		}
	}
	return n
}

// TestTransactionalCommits checks the replay of transactional offset commits on the real
// broker: committed ones apply, aborted ones do not, open ones wait, and a plain commit written
// after a transactional one wins when the transaction commits later. After each step the
// replay must agree with the coordinator (OffsetFetch), which hides pending offsets too.
func TestTransactionalCommits(t *testing.T) {
	e := openEnv(t)
	topic := e.topic(t, 1)
	group := stacktest.Name(t, "g")
	tp := migrate.TopicPartition{Topic: topic, Partition: 0}
	e.commit(t, group, cm(topic, 0, 1, "plain"))

	x := e.beginTxn(t)
	x.commitOffset(t, group, topic, 10)
	x.end(t, group, true)
	got := e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 10})
	if !got[tp].Transactional || got[tp].Metadata != "txn" {
		t.Errorf("after a committed transaction: %+v, want the transactional commit", got[tp])
	}

	x.commitOffset(t, group, topic, 20)
	x.end(t, group, false)
	e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 10})

	x.commitOffset(t, group, topic, 30)
	aborted := false
	t.Cleanup(func() {
		if !aborted {
			x.end(t, group, false)
		}
	})
	e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 10})
	if _, stats := e.readGroup(t, group); stats.OpenTransactions < 1 || stats.PendingCommits < 1 {
		t.Errorf("with a transaction open: stats %+v, want it counted as open", stats)
	}
	// A plain commit now, then the open transaction commits: the plain one is later in the log.
	e.commit(t, group, cm(topic, 0, 50, "plain after"))
	x.end(t, group, true)
	aborted = true
	got, stats := e.readGroup(t, group)
	if got[tp].Offset != 50 || got[tp].Transactional || stats.OpenTransactions != 0 {
		t.Errorf("plain commit after the transactional one: %+v (stats %+v), want 50 kept", got[tp], stats)
	}
	e.checkAgainstOffsetFetch(t, group, map[int32]int64{0: 50})

	if markers := e.markers(t, offsetlog.Partition(group, e.parts), x.pid); markers != 3 {
		t.Errorf("%d transaction markers of producer %d in the group's partition, want 3 (commit, abort, commit)", markers, x.pid)
	}
}
