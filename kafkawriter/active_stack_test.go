package kafkawriter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// joinHandler signals once its member has joined the group and got an assignment.
type joinHandler struct {
	once   sync.Once
	joined chan struct{}
}

func (h *joinHandler) Setup(sarama.ConsumerGroupSession) error {
	h.once.Do(func() { close(h.joined) })
	return nil
}

func (h *joinHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *joinHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case _, ok := <-claim.Messages():
			if !ok {
				return nil
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

// joinGroup starts a real sarama consumer-group member and waits until it has joined. The
// returned stop makes it leave the group.
func joinGroup(t *testing.T, s *stacktest.Stack, version sarama.KafkaVersion, group, topic string) (stop func()) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = version
	conf.Consumer.Offsets.AutoCommit.Enable = false // the member must not move the offsets itself
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	cg, err := sarama.NewConsumerGroup([]string{s.Kafka}, group, conf)
	if err != nil {
		t.Fatalf("consumer group: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &joinHandler{joined: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				t.Logf("consume: %v", err)
			}
		}
	}()
	select {
	case <-h.joined:
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatal("consumer did not join the group within 90s")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			if err := cg.Close(); err != nil {
				t.Errorf("close consumer group: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestCommitActiveGroup(t *testing.T) {
	c, s := openStack(t)
	topic := newTopic(t, c, 2)
	group := stacktest.Name(t, "g")
	before := []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 3}, {TopicPartition: tp(topic, 1), Offset: 4}}
	mustCommit(t, c, group, before) // while the group is absent: accepted

	stop := joinGroup(t, s, c.Version(), group, topic)
	states, err := c.Groups(testCtx(t, time.Minute), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	if st := states[group]; st.State != "Stable" || st.Members != 1 || !st.Active() {
		t.Errorf("group with a live member: %+v, want Stable with 1 member", st)
	}

	after := []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 10}, {TopicPartition: tp(topic, 1), Offset: 11}}
	res, err := c.Commit(testCtx(t, time.Minute), group, after)
	if err != nil {
		t.Fatalf("group error %v, want per-partition errors", err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for i, r := range res {
		if r.TopicPartition != after[i].TopicPartition || !IsGroupActive(r.Err) || !errors.Is(r.Err, ErrGroupActive) {
			t.Errorf("%s: %v, want a group-active error", r.TopicPartition, r.Err)
		}
		var kerr sarama.KError
		if !errors.As(r.Err, &kerr) {
			t.Errorf("%s: %v does not wrap the broker's KError", r.TopicPartition, r.Err)
		}
		t.Logf("%s refused: %v", r.TopicPartition, r.Err)
	}
	assertCommitted(t, c, group, before)

	// Once the member has left, the group is Empty and the same commit goes through.
	stop()
	mustCommit(t, c, group, after)
	assertCommitted(t, c, group, after)
}

func assertCommitted(t *testing.T, c *Client, group string, want []migrate.Commit) {
	t.Helper()
	got, err := c.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range want {
		if got[cm.TopicPartition].Offset != cm.Offset {
			t.Errorf("%s: committed %d, want %d", cm.TopicPartition, got[cm.TopicPartition].Offset, cm.Offset)
		}
	}
}
