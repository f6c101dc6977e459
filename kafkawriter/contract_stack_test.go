package kafkawriter

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
)

// The contract suites of migrate/contract against the real Client, as the fakes of
// migrate/migratetest run them in unit tests. The cluster is arranged and read back with
// sarama's own clients (admin, producer, raw requests), never through the code under test;
// the names of its topics and groups are unique to each case.

func TestKafkaStateContract(t *testing.T) {
	c, k := openContract(t)
	contract.TestKafkaState(t, func(*testing.T) (migrate.KafkaState, contract.Kafka) { return c, k })
}

func TestOffsetCommitterContract(t *testing.T) {
	c, k := openContract(t)
	contract.TestOffsetCommitter(t, func(*testing.T) (migrate.OffsetCommitter, contract.Kafka) { return c, k })
}

// openContract opens the Client under test and the sarama client and admin of the backend,
// for the whole suite.
func openContract(t *testing.T) (*Client, *saramaKafka) {
	c, s := openStack(t)
	conf := saramaConf(c)
	sc, err := sarama.NewClient([]string{s.Kafka}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sc.Close(); err != nil {
			t.Errorf("close sarama client: %v", err)
		}
	})
	// The admin shares sc: closing sc closes it.
	admin, err := sarama.NewClusterAdminFromClient(sc)
	if err != nil {
		t.Fatal(err)
	}
	return c, &saramaKafka{s: s, version: c.Version(), sc: sc, admin: admin}
}

// saramaKafka is contract.Kafka over the real stack, through sarama.
type saramaKafka struct {
	s       *stacktest.Stack
	version sarama.KafkaVersion
	sc      sarama.Client
	admin   sarama.ClusterAdmin
}

func (k *saramaKafka) Topic(t testing.TB, partitions int32) string {
	t.Helper()
	name := stacktest.Name(t, "ct")
	if err := k.admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	// Metadata reaches the brokers after CreateTopics returns: wait until every partition has
	// a leader (a hang guard bounds it, not a speed check).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := k.sc.RefreshMetadata(name)
		var parts []int32
		if err == nil {
			parts, err = k.sc.Partitions(name)
		}
		if err == nil && len(parts) == int(partitions) {
			led := 0
			for _, p := range parts {
				if _, lerr := k.sc.Leader(name, p); lerr == nil {
					led++
				}
			}
			if led == len(parts) {
				return name
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s: partitions without a leader after 2m (last error %v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (k *saramaKafka) MissingTopic(t testing.TB) string { return stacktest.Name(t, "missing") }
func (k *saramaKafka) Group(t testing.TB) string        { return stacktest.Name(t, "g") }

func (k *saramaKafka) Produce(t testing.TB, topic string, partition int32, n int) {
	produce(t, k.s, k.version, topic, partition, n)
}

func (k *saramaKafka) DeleteRecords(t testing.TB, topic string, partition int32, before int64) {
	if err := k.admin.DeleteRecords(topic, map[int32]int64{partition: before}); err != nil {
		t.Fatalf("delete records of %s/%d below %d: %v", topic, partition, before, err)
	}
}

// Commit sends an OffsetCommit as a consumer without a membership (generation -1, no member
// id) to the group's coordinator.
func (k *saramaKafka) Commit(t testing.TB, group string, offsets map[migrate.TopicPartition]int64) {
	t.Helper()
	b, err := k.sc.Coordinator(group)
	if err != nil {
		t.Fatalf("coordinator of %s: %v", group, err)
	}
	req := sarama.NewOffsetCommitRequest(k.sc.Config(), group)
	req.ConsumerGroupGeneration = sarama.GroupGenerationUndefined
	for tp, off := range offsets {
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, off, -1, 0, "")
	}
	resp, err := b.CommitOffset(req)
	if err != nil {
		t.Fatalf("commit offsets of %s: %v", group, err)
	}
	for topic, parts := range resp.Errors {
		for p, kerr := range parts {
			if kerr != sarama.ErrNoError {
				t.Fatalf("commit offset of %s %s/%d: %v", group, topic, p, kerr)
			}
		}
	}
}

func (k *saramaKafka) Committed(t testing.TB, group string) map[migrate.TopicPartition]contract.Committed {
	t.Helper()
	resp, err := k.admin.ListConsumerGroupOffsets(group, nil)
	if err != nil {
		t.Fatalf("list offsets of %s: %v", group, err)
	}
	if resp.Err != sarama.ErrNoError {
		t.Fatalf("list offsets of %s: %v", group, resp.Err)
	}
	out := map[migrate.TopicPartition]contract.Committed{}
	for topic, parts := range resp.Blocks {
		for p, b := range parts {
			if b.Err != sarama.ErrNoError {
				t.Fatalf("list offsets of %s %s/%d: %v", group, topic, p, b.Err)
			}
			if b.Offset >= 0 { // -1: no commit
				out[migrate.TopicPartition{Topic: topic, Partition: p}] = contract.Committed{Offset: b.Offset, Metadata: b.Metadata}
			}
		}
	}
	return out
}

func (k *saramaKafka) Join(t testing.TB, group, topic string) func() {
	tt, ok := t.(*testing.T)
	if !ok {
		t.Fatalf("Join needs a *testing.T, got %T", t)
	}
	return joinGroup(tt, k.s, k.version, group, topic)
}

// Retention asks a broker for offsets.retention.minutes with the admin client.
func (k *saramaKafka) Retention() time.Duration {
	brokers := k.sc.Brokers()
	if len(brokers) == 0 {
		panic("no broker known")
	}
	entries, err := k.admin.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource,
		Name: strconv.Itoa(int(brokers[0].ID())), ConfigNames: []string{"offsets.retention.minutes"}})
	if err != nil {
		panic(fmt.Sprintf("describe broker config: %v", err))
	}
	for _, e := range entries {
		if e.Name == "offsets.retention.minutes" {
			m, err := strconv.Atoi(e.Value)
			if err != nil {
				panic(fmt.Sprintf("offsets.retention.minutes=%q: %v", e.Value, err))
			}
			return time.Duration(m) * time.Minute
		}
	}
	panic("the broker does not report offsets.retention.minutes")
}
