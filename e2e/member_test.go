package e2e_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// joinTimeout bounds how long a member may take to join its group and reach Stable.
const joinTimeout = time.Minute

// member is a real consumer-group member (sarama, classic group protocol) that starts from the
// group's committed offsets, or from the oldest record where there is none, and never commits.
type member struct {
	e       *env
	group   string
	cg      sarama.ConsumerGroup
	cancel  context.CancelFunc
	stopped chan error // the consume loop's end

	mu   sync.Mutex
	errs []error // from cg.Errors()

	errsDone chan struct{}
	once     sync.Once
}

// join starts a member of group consuming topics with h, waits until the coordinator reports
// the group Stable with this one member, and closes the member at the end of the test.
func (e *env) join(group string, topics []string, h sarama.ConsumerGroupHandler) *member {
	e.t.Helper()
	cfg := e.saramaConfig()
	// Oldest, so a missing commit shows as reprocessing from the start, never as a skip.
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup([]string{e.st.Kafka}, group, cfg)
	if err != nil {
		e.t.Fatalf("consumer group %s: %v", group, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	m := &member{e: e, group: group, cg: cg, cancel: cancel, stopped: make(chan error, 1), errsDone: make(chan struct{})}
	e.t.Cleanup(m.close)
	go func() {
		defer close(m.errsDone)
		for err := range cg.Errors() {
			m.mu.Lock()
			m.errs = append(m.errs, err)
			m.mu.Unlock()
		}
	}()
	go func() {
		// Consume returns at every rebalance: go on until the member is closed.
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, topics, h); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					break
				}
				m.stopped <- err
				return
			}
		}
		m.stopped <- nil
	}()
	m.waitState("Stable", 1)
	return m
}

// waitState polls the coordinator (DescribeGroups) until the group is in state with members
// members, and fails the test with the last answer when that does not happen in time.
func (m *member) waitState(state string, members int) {
	m.e.t.Helper()
	deadline := time.Now().Add(joinTimeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-m.stopped:
			m.stopped <- err // for close
			m.e.t.Fatalf("group %s: the member stopped consuming before the group was %s: %v", m.group, state, err)
		default:
		}
		desc, err := m.e.admin.DescribeConsumerGroups([]string{m.group})
		switch {
		case err != nil:
			last = "error: " + err.Error()
		case len(desc) != 1:
			last = "no description"
		case desc[0].State == state && len(desc[0].Members) == members:
			return
		default:
			last = desc[0].State + " with " + strconv.Itoa(len(desc[0].Members)) + " members"
		}
		time.Sleep(100 * time.Millisecond) // polling interval, not an assertion
	}
	m.e.t.Fatalf("group %s: not %s with %d member(s) within %s; last seen: %s", m.group, state, members, joinTimeout, last)
}

// close leaves the group and stops the member; errors of the member fail the test.
func (m *member) close() {
	m.once.Do(func() {
		m.cancel()
		if err := m.cg.Close(); err != nil {
			m.e.t.Errorf("close consumer group %s: %v", m.group, err)
		}
		if err := <-m.stopped; err != nil {
			m.e.t.Errorf("consumer group %s: consume: %v", m.group, err)
		}
		<-m.errsDone
		m.mu.Lock()
		defer m.mu.Unlock()
		if err := errors.Join(m.errs...); err != nil {
			m.e.t.Errorf("consumer group %s: %v", m.group, err)
		}
	})
}

// idle is a handler that reads and drops every record and marks nothing.
type idle struct{}

func (idle) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (idle) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (idle) ConsumeClaim(_ sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for range claim.Messages() {
	}
	return nil
}

// tracker records, per partition, where the member's claim started and which offsets it
// received, and closes done once every partition has been read to logEnd.
type tracker struct {
	logEnd map[migrate.TopicPartition]int64

	mu      sync.Mutex
	initial map[migrate.TopicPartition]int64
	got     map[migrate.TopicPartition][]int64
	once    sync.Once
	done    chan struct{}
}

func newTracker(logEnd map[migrate.TopicPartition]int64) *tracker {
	return &tracker{logEnd: logEnd, initial: map[migrate.TopicPartition]int64{},
		got: map[migrate.TopicPartition][]int64{}, done: make(chan struct{})}
}

func (*tracker) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*tracker) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *tracker) ConsumeClaim(_ sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	k := tp(claim.Topic(), claim.Partition())
	h.mu.Lock()
	// A new claim (after a rebalance) starts again from the committed offset: keep what the
	// latest one saw, which is what a restarted consumer would process.
	h.initial[k] = claim.InitialOffset()
	h.got[k] = nil
	h.check()
	h.mu.Unlock()
	for msg := range claim.Messages() {
		h.mu.Lock()
		h.got[k] = append(h.got[k], msg.Offset)
		h.check()
		h.mu.Unlock()
	}
	return nil
}

// check closes done when every partition is claimed and read up to its log end. Call with mu.
func (h *tracker) check() {
	for k, end := range h.logEnd {
		start, ok := h.initial[k]
		if !ok {
			return
		}
		if got := h.got[k]; start < end && (len(got) == 0 || got[len(got)-1] < end-1) {
			return
		}
	}
	h.once.Do(func() { close(h.done) })
}
