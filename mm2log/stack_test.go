package mm2log_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// syncRecord is one offset-syncs record in MirrorMaker 2's own encoding (OffsetSync.java),
// built by hand: key topic (int16 length, bytes) and partition (int32), value upstream and
// downstream offsets (int64 each).
func syncRecord(topic string, part int32, up, down int64) (key, value []byte) {
	key = binary.BigEndian.AppendUint16(nil, uint16(len(topic)))
	key = binary.BigEndian.AppendUint32(append(key, topic...), uint32(part))
	value = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(up)), uint64(down))
	return key, value
}

// compactedTopic creates a one-partition compacted topic, as MirrorMaker 2 creates its
// offset-syncs topic, and produces recs to it in order (one request each, so the log order is
// theirs). It returns the topic's name.
func compactedTopic(t *testing.T, st *stacktest.Stack, recs [][2][]byte) string {
	t.Helper()
	return newTopic(t, st, "compact", recs)
}

// producerConfig is a producer's config at the version the stack's broker negotiates: a
// broker before 0.11 takes message sets only, and Kafka 4.x rejects the oldest request
// versions (KIP-896).
func producerConfig(t *testing.T, st *stacktest.Stack) *sarama.Config {
	t.Helper()
	v, err := kafkaconn.Negotiate(testCtx(t, time.Minute), kafkaconn.Config{Bootstrap: []string{st.Kafka}})
	if err != nil {
		t.Fatal(err)
	}
	conf := sarama.NewConfig()
	conf.Version = v
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	return conf
}

// newTopic is compactedTopic with the cleanup policy given.
func newTopic(t *testing.T, st *stacktest.Stack, policy string, recs [][2][]byte) string {
	t.Helper()
	admin, err := sarama.NewClusterAdmin([]string{st.Kafka}, producerConfig(t, st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, admin.Close) })
	name := stacktest.Name(t, "mm2-offset-syncs")
	if err := admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"cleanup.policy": &policy}}, false); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	produce(t, st, name, recs)
	return name
}

// produce appends recs to partition 0 of topic, in order.
func produce(t *testing.T, st *stacktest.Stack, name string, recs [][2][]byte) {
	t.Helper()
	prod, err := sarama.NewSyncProducer([]string{st.Kafka}, producerConfig(t, st))
	if err != nil {
		t.Fatal(err)
	}
	defer closeOrFail(t, prod.Close)
	for i, r := range recs {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: name, Partition: 0,
			Key: sarama.ByteEncoder(r[0]), Value: sarama.ByteEncoder(r[1])}); err != nil {
			t.Fatalf("produce record %d to %s: %v", i, name, err)
		}
	}
}

func closeOrFail(t *testing.T, f func() error) {
	if err := f(); err != nil {
		t.Error(err)
	}
}

func open(t *testing.T, st *stacktest.Stack) *mm2log.Reader {
	t.Helper()
	r, err := mm2log.Open(testCtx(t, time.Minute), mm2log.Config{Bootstrap: []string{st.Kafka}, Cluster: "source"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, r.Close) })
	return r
}

func TestReadOffsetSyncsStack(t *testing.T) {
	st := stacktest.Get(t)
	type s = [4]int64 // partition, upstream, downstream; [0] picks the topic: 0 orders, 1 pay
	topics := []string{"orders", "pay"}
	written := []s{
		{0, 0, 100, 0}, {0, 1, 10, 0}, {1, 0, 0, 0}, {0, 0, 200, 95}, {0, 1, 20, 10},
		// orders-1 starts again (its topic re-created on the source): upstream 5 < 20.
		{0, 1, 5, 30}, {0, 0, 300, 190}, {0, 1, 15, 40}, {1, 0, 50, 48},
	}
	var recs [][2][]byte
	for _, w := range written {
		k, v := syncRecord(topics[w[0]], int32(w[1]), w[2], w[3])
		recs = append(recs, [2][]byte{k, v})
	}
	topic := compactedTopic(t, st, recs)

	got, err := open(t, st).Read(testCtx(t, time.Minute), topic)
	if err != nil {
		t.Fatal(err)
	}
	if got.Records != int64(len(written)) || got.Start[0] != 0 || got.End[0] != int64(len(written)) {
		t.Errorf("read %d records of [%d, %d), want %d of [0, %d)", got.Records, got.Start[0], got.End[0], len(written), len(written))
	}
	if len(got.Syncs) != 3 {
		t.Errorf("syncs of %d source partitions, want 3: %v", len(got.Syncs), got.Syncs)
	}
	cases := []struct {
		topic string
		part  int32
		off   int64
		want  mm2.Translation
	}{
		{"orders", 0, 200, mm2.Translation{Class: mm2.Exact, Target: 95}},
		{"orders", 0, 250, mm2.Translation{Class: mm2.RoundedDown, Target: 96, MaxReread: 49}},
		{"orders", 0, 99, mm2.Translation{Class: mm2.BelowFirstSync}},
		{"orders", 1, 15, mm2.Translation{Class: mm2.Exact, Target: 40}},
		{"orders", 1, 20, mm2.Translation{Class: mm2.RoundedDown, Target: 41, MaxReread: 4}},
		// A sync before the reset pinned 10 at 0; it is forgotten, and 10 now lies between the
		// new syncs 5 and 15.
		{"orders", 1, 10, mm2.Translation{Class: mm2.RoundedDown, Target: 31, MaxReread: 4}},
		{"orders", 1, 4, mm2.Translation{Class: mm2.BelowFirstSync}},
		{"pay", 0, 50, mm2.Translation{Class: mm2.Exact, Target: 48}},
		{"pay", 1, 0, mm2.Translation{Class: mm2.NoSync}},
	}
	for _, tc := range cases {
		syncs := got.Syncs[migrate.TopicPartition{Topic: tc.topic, Partition: tc.part}]
		tr := syncs.Translate(tc.off, 100)
		tr.Reason = ""
		if tr != tc.want {
			t.Errorf("%s-%d: Translate(%d) = %+v, want %+v", tc.topic, tc.part, tc.off, tr, tc.want)
		}
	}
}

func TestReadOffsetSyncsStackErrors(t *testing.T) {
	st := stacktest.Get(t)
	r := open(t, st)
	missing := mm2log.Topic("no-such-alias-" + stacktest.Name(t, "x"))
	_, err := r.Read(testCtx(t, time.Minute), missing)
	if !errors.Is(err, mm2log.ErrNoTopic) || !strings.Contains(err.Error(), missing) ||
		!strings.Contains(err.Error(), "source at "+st.Kafka) || !strings.Contains(err.Error(), "alias") {
		t.Errorf("missing topic: %v; want ErrNoTopic naming %s, the cluster and the alias", err, missing)
	}
	k, v := syncRecord("orders", 0, 1, 1)
	topic := compactedTopic(t, st, [][2][]byte{{k, v}, {k, v[:12]}, {k, v}})
	if _, err := r.Read(testCtx(t, time.Minute), topic); err == nil || !strings.Contains(err.Error(), "partition 0 offset 1: offset sync") {
		t.Errorf("a record cut short at offset 1: %v; want an error naming its offset", err)
	}
}
