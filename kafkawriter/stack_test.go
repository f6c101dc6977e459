package kafkawriter

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// openStack opens a Client on the real stack (skipping under -short).
func openStack(t testing.TB) (*Client, *stacktest.Stack) {
	t.Helper()
	s := stacktest.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, Config{Bootstrap: []string{s.Kafka}})
	if err != nil {
		t.Fatalf("open %s: %v", s.Kafka, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c, s
}

// testCtx is a context for one test's calls, bounded so a hang fails instead of stalling.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newTopic(t testing.TB, c *Client, partitions int32) string {
	t.Helper()
	name := stacktest.Name(t, "kw")
	if err := c.CreateTopic(testCtx(t, 2*time.Minute), name, partitions); err != nil {
		t.Fatal(err)
	}
	return name
}

// produce writes n records to one partition with a SyncProducer.
func produce(t testing.TB, s *stacktest.Stack, version sarama.KafkaVersion, topic string, partition int32, n int) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = version
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer([]string{s.Kafka}, conf)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("close producer: %v", err)
		}
	}()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition, Value: sarama.StringEncoder("v")}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("produce %d records to %s/%d: %v", n, topic, partition, err)
	}
}

func tp(topic string, p int32) migrate.TopicPartition {
	return migrate.TopicPartition{Topic: topic, Partition: p}
}

// mustCommit commits and fails the test on any group or partition error.
func mustCommit(t testing.TB, c *Client, group string, commits []migrate.Commit) {
	t.Helper()
	res, err := c.Commit(testCtx(t, 2*time.Minute), group, commits)
	if err != nil {
		t.Fatalf("commit group %s: %v", group, err)
	}
	if len(res) != len(commits) {
		t.Fatalf("commit group %s: %d results for %d commits", group, len(res), len(commits))
	}
	for i, r := range res {
		if r.TopicPartition != commits[i].TopicPartition {
			t.Fatalf("result %d is for %s, want %s", i, r.TopicPartition, commits[i].TopicPartition)
		}
		if r.Err != nil {
			t.Fatalf("commit %s: %v", r.TopicPartition, r.Err)
		}
	}
}

func TestOpenNegotiatesVersion(t *testing.T) {
	c, s := openStack(t)
	want := map[string]sarama.KafkaVersion{"zk": sarama.V3_9_0_0, "mm2": sarama.V3_9_0_0, "kraft": sarama.V4_0_0_0}[s.Profile]
	if c.Version() != want {
		t.Fatalf("profile %s: negotiated %s, want %s", s.Profile, c.Version(), want)
	}
}

func TestOpenExplicitVersion(t *testing.T) {
	s := stacktest.Get(t)
	c, err := Open(testCtx(t, time.Minute), Config{Bootstrap: []string{s.Kafka}, Version: "2.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	// The lowest allowed level must still work against Kafka 4.x (OffsetCommit v6).
	topic := newTopic(t, c, 1)
	group := stacktest.Name(t, "g")
	mustCommit(t, c, group, []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 3}})
	got, err := c.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil || got[tp(topic, 0)].Offset != 3 {
		t.Fatalf("fetch after commit at 2.1.0: %v, %v", got, err)
	}
}

// Not a stack test: an unreachable cluster is one error naming every bootstrap server.
func TestOpenUnreachable(t *testing.T) {
	a, b := stacktest.ClosedPort(t), stacktest.ClosedPort(t)
	_, err := Open(testCtx(t, time.Minute), Config{Bootstrap: []string{a, b}, DialTimeout: 2 * time.Second})
	if err == nil {
		t.Fatal("Open succeeded against closed ports")
	}
	for _, want := range []string{"no kafka broker reachable", a, b} {
		if !containsStr(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, Config{Bootstrap: []string{stacktest.ClosedPort(t)}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled context = %v, want context.Canceled", err)
	}
}
