package stacktest_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// TestStackIsReal proves the stack is a working Kafka: a real consumer-group member joins,
// consumes, commits through the group coordinator and leaves, and Kafka's own consumer-groups
// tool then reports exactly the committed offsets.
func TestStackIsReal(t *testing.T) {
	st := stacktest.Get(t)
	topic, group := stacktest.Name(t, "smoke-topic"), stacktest.Name(t, "smoke-group")
	// Per partition: records produced, and the offset the member commits. Partition 0 commits
	// short of its log end so the check cannot pass by reporting the log end instead.
	records := map[int32]int64{0: 5, 1: 3}
	commit := map[int32]int64{0: 4, 1: 3}

	cfg := sarama.NewConfig()
	cfg.ClientID = "zk2kafka-stacktest"
	cfg.Version = sarama.V2_8_0_0 // Kafka 4.x rejects the oldest request versions (KIP-896)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 10 // a new topic's leader may still be taking over (KRaft)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false // only the explicit Commit below may commit
	cfg.Consumer.Return.Errors = true

	admin, err := sarama.NewClusterAdmin([]string{st.Kafka}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	produce(t, st.Kafka, cfg, topic, records)

	cg, err := sarama.NewConsumerGroup([]string{st.Kafka}, group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cgErrs []error
	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		for err := range cg.Errors() {
			cgErrs = append(cgErrs, err)
		}
	}()

	h := &handler{records: records, commit: commit, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	consumed := make(chan error, 1)
	go func() {
		// Consume returns at each rebalance; loop until the test cancels.
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				consumed <- err
				return
			}
		}
		consumed <- nil
	}()

	select {
	case <-h.done:
	case err := <-consumed:
		t.Fatalf("consumer group %s stopped before committing: %v", group, err)
	case <-ctx.Done():
		t.Fatalf("consumer group %s: no commit of all partitions within the timeout", group)
	}
	if desc, err := admin.DescribeConsumerGroups([]string{group}); err != nil || len(desc) != 1 ||
		desc[0].State != "Stable" || len(desc[0].Members) != 1 {
		t.Errorf("while consuming, group %s: %+v (%v), want Stable with one member", group, desc, err)
	}
	cancel()
	if err := <-consumed; err != nil {
		t.Fatalf("consume: %v", err)
	}
	if err := cg.Close(); err != nil { // leaves the group
		t.Fatalf("close consumer group: %v", err)
	}
	<-errsDone
	if err := errors.Join(cgErrs...); err != nil {
		t.Fatalf("consumer group errors: %v", err)
	}
	if desc, err := admin.DescribeConsumerGroups([]string{group}); err != nil || len(desc) != 1 ||
		desc[0].State != "Empty" || len(desc[0].Members) != 0 {
		t.Errorf("after leaving, group %s: %+v (%v), want Empty with no members", group, desc, err)
	}

	want := map[string]int64{}
	for p, off := range commit {
		want[topic+"/"+strconv.Itoa(int(p))] = off
	}
	if got := st.DescribeOffsets(t, group); !maps.Equal(got, want) {
		t.Errorf("consumer-groups tool (%s stack) reports %v, want %v", st.Profile, got, want)
	}
}

func produce(t *testing.T, kafka string, cfg *sarama.Config, topic string, records map[int32]int64) {
	t.Helper()
	prod, err := sarama.NewSyncProducer([]string{kafka}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p, n := range records {
		for i := range n {
			msg := &sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.StringEncoder("smoke " + strconv.FormatInt(i, 10))}
			part, off, err := prod.SendMessage(msg)
			if err != nil || part != p || off != i {
				t.Fatalf("produce record %d to %s/%d: landed at %d/%d: %v", i, topic, p, part, off, err)
			}
		}
	}
}

// handler marks every record below commit[p], commits once all partitions are read to their
// log end, and then closes done.
type handler struct {
	records, commit map[int32]int64

	mu       sync.Mutex
	finished map[int32]bool
	once     sync.Once
	done     chan struct{}
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	p := claim.Partition()
	for msg := range claim.Messages() {
		if msg.Offset < h.commit[p] {
			sess.MarkMessage(msg, "") // marks msg.Offset+1: the next offset to consume
		}
		if msg.Offset != h.records[p]-1 {
			continue
		}
		h.mu.Lock()
		if h.finished == nil {
			h.finished = map[int32]bool{}
		}
		h.finished[p] = true
		all := len(h.finished) == len(h.records)
		h.mu.Unlock()
		if all {
			sess.Commit() // synchronous: sends the marked offsets to the coordinator
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}
