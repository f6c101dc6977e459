// Package e2e_test runs zk2kafka end to end against the real local stack (ZooKeeper + Kafka
// started by scripts/stack): seeded through the real adapters, driven through the real command
// line (cmd.Execute), checked with Kafka's own tools and a real sarama consumer.
package e2e_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// callTimeout bounds every single call to a store or to the command line: a hang fails the
// test with a message instead of stalling until the go test timeout.
const callTimeout = 2 * time.Minute

// env is one test's corner of the shared stack: a ZooKeeper chroot of its own (so it sees no
// other test's groups), the real adapters on it, and the names it created, deleted at the end.
type env struct {
	t      *testing.T
	st     *stacktest.Stack
	chroot string // "/e2e-<test>-<rand>"
	zkURL  string // host:port/chroot, as the command line takes it
	raw    *zk.Conn
	zr     *zkreader.Reader // on the chroot
	kw     *kafkawriter.Client
	admin  sarama.ClusterAdmin
	dir    string // for plan, CSV and backup files
	// sec is how the test's own clients (kw, admin, producers) reach Kafka: plaintext, or the
	// secure profile's super user.
	sec kafkaconn.Security
	// kafkaArgs are added to every command line after --kafka (the secure tests' TLS/SASL flags),
	// zkArgs after --zk (ZooKeeper's TLS flags).
	kafkaArgs, zkArgs []string
	// cliKafka, when set, is the --kafka of the command lines instead of the stack's Kafka (the
	// kerberos profile's GSSAPI listener; the test's own clients stay on the stack's Kafka).
	cliKafka string
}

// kafkaForCLI is the --kafka of the command lines.
func (e *env) kafkaForCLI() string {
	if e.cliKafka != "" {
		return e.cliKafka
	}
	return e.st.Kafka
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, stacktest.Get(t), kafkaconn.Security{})
}

// newEnvOn is newEnv on stack st, the test's own Kafka clients connecting with sec.
func newEnvOn(t *testing.T, st *stacktest.Stack, sec kafkaconn.Security) *env {
	t.Helper()
	return newEnvAt(t, st, sec, st.ZK, nil)
}

// newEnvAt is newEnvOn with the legacy offsets in the ZooKeeper at zkServer, reached over TLS
// with zkTLS when it is set.
func newEnvAt(t *testing.T, st *stacktest.Stack, sec kafkaconn.Security, zkServer string, zkTLS *tls.Config) *env {
	t.Helper()
	e := &env{t: t, st: st, chroot: "/" + stacktest.Name(t, "e2e"), dir: t.TempDir(), sec: sec}
	e.zkURL = zkServer + e.chroot
	e.raw = dialZKWith(t, zkServer, zkTLS)
	e.ensure(e.chroot)
	t.Cleanup(func() {
		if err := deleteTree(e.raw, e.chroot); err != nil {
			t.Errorf("delete test chroot %s: %v", e.chroot, err)
		}
	})
	ctx := e.ctx()
	var err error
	if e.zr, err = zkreader.Open(ctx, zkreader.Config{Servers: e.zkURL, TLS: zkTLS}); err != nil {
		t.Fatalf("open zookeeper %s: %v", e.zkURL, err)
	}
	t.Cleanup(e.zr.Close)
	if e.kw, err = kafkawriter.Open(ctx, kafkawriter.Config{Bootstrap: []string{st.Kafka}, Security: sec}); err != nil {
		t.Fatalf("open kafka %s: %v", st.Kafka, err)
	}
	t.Cleanup(func() {
		if err := e.kw.Close(); err != nil {
			t.Errorf("close kafka client: %v", err)
		}
	})
	if e.admin, err = sarama.NewClusterAdmin([]string{st.Kafka}, e.saramaConfig()); err != nil {
		t.Fatalf("kafka admin %s: %v", st.Kafka, err)
	}
	t.Cleanup(func() {
		if err := e.admin.Close(); err != nil {
			t.Errorf("close kafka admin: %v", err)
		}
	})
	return e
}

// sub is e for subtest t: failures and cleanups go to t, the stores are shared.
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// ctx is a context for one call, cancelled at the end of the test at the latest.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	e.t.Cleanup(cancel)
	return ctx
}

// saramaConfig is a client config at the protocol level zk2kafka negotiated with the broker.
func (e *env) saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "zk2kafka-e2e"
	c.Version = sarama.V2_8_0_0 // Kafka 4.x rejects the oldest request versions (KIP-896)
	if e.kw != nil {
		c.Version = e.kw.Version()
	}
	if err := e.sec.Apply(c); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// group returns a fresh group name; its Kafka group is deleted at the end of the test.
func (e *env) group() string {
	g := stacktest.Name(e.t, "g")
	e.deleteGroupAtEnd(g)
	return g
}

// deleteGroupAtEnd deletes Kafka group g at the end of the test, after its members closed.
func (e *env) deleteGroupAtEnd(g string) {
	e.t.Cleanup(func() {
		err := e.admin.DeleteConsumerGroup(g)
		if err != nil && !errors.Is(err, sarama.ErrGroupIDNotFound) {
			e.t.Logf("delete kafka group %s: %v", g, err)
		}
	})
}

// topic creates a topic with records[p] records in partition p; it is deleted at the end.
func (e *env) topic(records ...int) string {
	e.t.Helper()
	return e.namedTopic(stacktest.Name(e.t, "t"), records...)
}

// namedTopic is topic with the given name.
func (e *env) namedTopic(name string, records ...int) string {
	e.t.Helper()
	e.deleteTopicAtEnd(name)
	if err := e.kw.CreateTopic(e.ctx(), name, int32(len(records))); err != nil {
		e.t.Fatal(err)
	}
	prod, err := sarama.NewSyncProducer([]string{e.st.Kafka}, e.producerConfig())
	if err != nil {
		e.t.Fatalf("producer: %v", err)
	}
	defer func() {
		if err := prod.Close(); err != nil {
			e.t.Errorf("close producer: %v", err)
		}
	}()
	for p, n := range records {
		msgs := make([]*sarama.ProducerMessage, n)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{Topic: name, Partition: int32(p), Value: sarama.StringEncoder(fmt.Sprintf("r%d", i))}
		}
		if err := prod.SendMessages(msgs); err != nil {
			e.t.Fatalf("produce %d records to %s/%d: %v", n, name, p, err)
		}
	}
	return name
}

func (e *env) producerConfig() *sarama.Config {
	c := e.saramaConfig()
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	return c
}

func (e *env) deleteTopicAtEnd(name string) {
	e.t.Cleanup(func() {
		err := e.admin.DeleteTopic(name)
		if err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			e.t.Logf("delete topic %s: %v", name, err)
		}
	})
}

// raiseLogStart deletes the records of topic/partition below offset, as retention would.
func (e *env) raiseLogStart(topic string, partition int32, offset int64) {
	e.t.Helper()
	if err := e.admin.DeleteRecords(topic, map[int32]int64{partition: offset}); err != nil {
		e.t.Fatalf("delete records of %s/%d below %d: %v", topic, partition, offset, err)
	}
}

// zkOffsets writes group's legacy offsets of topic (partition -> offset) with the real adapter.
func (e *env) zkOffsets(group, topic string, offsets map[int32]int64) {
	e.t.Helper()
	m := map[migrate.TopicPartition]int64{}
	for p, off := range offsets {
		m[tp(topic, p)] = off
	}
	if err := e.zr.WriteOffsets(e.ctx(), group, m); err != nil {
		e.t.Fatal(err)
	}
}

// rawZnode writes an offset znode's data as is, whatever it holds, under the chroot.
func (e *env) rawZnode(group, topic string, partition int32, data string) {
	e.t.Helper()
	p := fmt.Sprintf("%s/consumers/%s/offsets/%s/%d", e.chroot, group, topic, partition)
	e.ensure(path.Dir(p))
	if _, err := e.raw.Create(p, []byte(data), 0, worldACL()); err != nil {
		e.t.Fatalf("create znode %s: %v", p, err)
	}
}

// kafkaCommit commits group's offsets of topic in Kafka, with metadata md, through the adapter.
func (e *env) kafkaCommit(group, topic, md string, offsets map[int32]int64) {
	e.t.Helper()
	var commits []migrate.Commit
	for p, off := range offsets {
		commits = append(commits, migrate.Commit{TopicPartition: tp(topic, p), Offset: off, Metadata: md})
	}
	res, err := e.kw.Commit(e.ctx(), group, commits)
	if err != nil {
		e.t.Fatalf("commit group %s: %v", group, err)
	}
	for _, r := range res {
		if r.Err != nil {
			e.t.Fatalf("commit group %s %s: %v", group, r.TopicPartition, r.Err)
		}
	}
}

// committed is group's committed offsets as Kafka's OffsetFetch returns them.
func (e *env) committed(group string) map[migrate.TopicPartition]kafkawriter.Committed {
	e.t.Helper()
	c, err := e.kw.FetchCommitted(e.ctx(), group)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// offsets is the same without metadata, keyed "topic/partition" like DescribeOffsets.
func (e *env) offsets(group string) map[string]int64 {
	out := map[string]int64{}
	for k, c := range e.committed(group) {
		out[k.String()] = c.Offset
	}
	return out
}

func tp(topic string, p int32) migrate.TopicPartition {
	return migrate.TopicPartition{Topic: topic, Partition: p}
}

// want turns topic partition -> offset into the "topic/partition" keys of DescribeOffsets.
func want(topic string, offsets map[int32]int64) map[string]int64 {
	out := map[string]int64{}
	for p, off := range offsets {
		out[tp(topic, p).String()] = off
	}
	return out
}
