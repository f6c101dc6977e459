package kafkawriter

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestTopicsLogRange(t *testing.T) {
	c, s := openStack(t)
	topic := newTopic(t, c, 3)
	produce(t, s, c.Version(), topic, 0, 5)
	produce(t, s, c.Version(), topic, 1, 3)
	// Move the log start of partition 0 so "earliest" is observably not 0.
	admin, err := sarama.NewClusterAdmin([]string{s.Kafka}, saramaConf(c))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := admin.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := admin.DeleteRecords(topic, map[int32]int64{0: 2}); err != nil {
		t.Fatalf("delete records: %v", err)
	}

	missing := stacktest.Name(t, "missing")
	got, err := c.Topics(testCtx(t, time.Minute), []string{topic, missing, topic})
	if err != nil {
		t.Fatal(err)
	}
	want := migrate.TopicInfo{Exists: true, Partitions: map[int32]migrate.PartitionRange{
		0: {LogStart: 2, LogEnd: 5},
		1: {LogStart: 0, LogEnd: 3},
		2: {LogStart: 0, LogEnd: 0},
	}}
	if !equalInfo(got[topic], want) {
		t.Errorf("topic %s: got %+v, want %+v", topic, got[topic], want)
	}
	if info, ok := got[missing]; !ok || info.Exists || len(info.Partitions) != 0 {
		t.Errorf("missing topic: got %+v (present %v), want Exists=false", info, ok)
	}
	if len(got) != 2 {
		t.Errorf("got %d topics, want 2", len(got))
	}
	// Asking must not have created the missing topic.
	again, err := c.Topics(testCtx(t, time.Minute), []string{missing})
	if err != nil || again[missing].Exists {
		t.Errorf("missing topic after a second look: %+v, %v", again, err)
	}
}

func TestTopicsEmpty(t *testing.T) {
	c, _ := openStack(t)
	got, err := c.Topics(testCtx(t, time.Minute), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Topics(nil) = %v, %v", got, err)
	}
}

func TestCreateTopicIdempotent(t *testing.T) {
	c, _ := openStack(t)
	topic := newTopic(t, c, 2)
	if err := c.CreateTopic(testCtx(t, time.Minute), topic, 2); err != nil {
		t.Fatalf("second create: %v", err)
	}
	if err := c.CreateTopic(testCtx(t, time.Minute), topic, 3); err == nil {
		t.Fatal("create with another partition count succeeded")
	}
}

func TestOffsetsRetention(t *testing.T) {
	c, _ := openStack(t)
	got, err := c.OffsetsRetention(testCtx(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got != 7*24*time.Hour {
		t.Fatalf("retention %v, want 168h (offsets.retention.minutes default 10080)", got)
	}
}

func saramaConf(c *Client) *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = c.Version()
	return conf
}

func equalInfo(a, b migrate.TopicInfo) bool {
	if a.Exists != b.Exists || len(a.Partitions) != len(b.Partitions) {
		return false
	}
	for p, r := range b.Partitions {
		if a.Partitions[p] != r {
			return false
		}
	}
	return true
}
