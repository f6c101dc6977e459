package offsetlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/offsetlog"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// env is the real stack with the clients a test needs: zk2kafka's writer (the thing checked),
// this package's reader, and a plain sarama client for raw fetches and admin calls.
type env struct {
	st     *stacktest.Stack
	kw     *kafkawriter.Client
	reader *offsetlog.Reader
	sc     sarama.Client
	parts  int32 // partitions of __consumer_offsets
}

func openEnv(t *testing.T) *env {
	t.Helper()
	st := stacktest.Get(t)
	ctx := testCtx(t, time.Minute)
	kw, err := kafkawriter.Open(ctx, kafkawriter.Config{Bootstrap: []string{st.Kafka}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, kw.Close) })
	r, err := offsetlog.Open(ctx, offsetlog.Config{Bootstrap: []string{st.Kafka}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, r.Close) })
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0 // Kafka 4.x rejects the oldest request versions (KIP-896)
	sc, err := sarama.NewClient([]string{st.Kafka}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, sc.Close) })
	parts, err := sc.Partitions(offsetlog.Topic)
	if err != nil {
		t.Fatalf("partitions of %s: %v", offsetlog.Topic, err)
	}
	return &env{st: st, kw: kw, reader: r, sc: sc, parts: int32(len(parts))}
}

func closeOrFail(t *testing.T, f func() error) {
	if err := f(); err != nil {
		t.Error(err)
	}
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) topic(t *testing.T, partitions int32) string {
	t.Helper()
	name := stacktest.Name(t, "ol")
	if err := e.kw.CreateTopic(testCtx(t, 2*time.Minute), name, partitions); err != nil {
		t.Fatal(err)
	}
	return name
}

func (e *env) commit(t *testing.T, group string, commits ...migrate.Commit) {
	t.Helper()
	res, err := e.kw.Commit(testCtx(t, time.Minute), group, commits)
	if err != nil {
		t.Fatalf("commit group %s: %v", group, err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("commit %s of group %s: %v", r.TopicPartition, group, r.Err)
		}
	}
}

func (e *env) readGroup(t *testing.T, group string) (map[migrate.TopicPartition]offsetlog.Committed, offsetlog.Stats) {
	t.Helper()
	got, stats, err := e.reader.ReadGroups(testCtx(t, time.Minute), []string{group})
	if err != nil {
		t.Fatalf("read group %s from %s: %v", group, offsetlog.Topic, err)
	}
	if len(got) > 1 {
		t.Fatalf("ReadGroups(%s) returned other groups: %v", group, got)
	}
	return got[group], stats
}

func cm(topic string, p int32, off int64, meta string) migrate.Commit {
	return migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: topic, Partition: p}, Offset: off, Metadata: meta}
}

// rawRecord is one record of __consumer_offsets as fetched, undecoded.
type rawRecord struct {
	offset     int64
	key, value []byte
	control    bool
	producerID int64
}

// rawRecords fetches partition p of __consumer_offsets from its start to its high watermark
// with plain Fetch requests, independently of the reader under test.
func (e *env) rawRecords(t *testing.T, p int32) []rawRecord {
	t.Helper()
	next, err := e.sc.GetOffset(offsetlog.Topic, p, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	end, err := e.sc.GetOffset(offsetlog.Topic, p, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.sc.Leader(offsetlog.Topic, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []rawRecord
	for next < end {
		req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 500, MinBytes: 1, MaxBytes: 16 << 20, SessionEpoch: -1}
		req.AddBlock(offsetlog.Topic, p, next, 8<<20, -1)
		resp, err := b.Fetch(req)
		if err != nil {
			t.Fatalf("fetch %s/%d at %d: %v", offsetlog.Topic, p, next, err)
		}
		blk := resp.GetBlock(offsetlog.Topic, p)
		if blk == nil || blk.Err != sarama.ErrNoError || len(blk.RecordsSet) == 0 {
			t.Fatalf("fetch %s/%d at %d (end %d): block %+v", offsetlog.Topic, p, next, end, blk)
		}
		for _, rs := range blk.RecordsSet {
			rb := rs.RecordBatch
			if rb == nil {
				// Kafka before 0.11 writes message sets: this helper reads v2 batches only, and
				// would otherwise ask for the same offset forever.
				t.Fatalf("fetch %s/%d at %d: a message set, not v2 record batches (broker %s)", offsetlog.Topic, p, next, e.st.KafkaRelease)
			}
			if rb.PartialTrailingRecord {
				break
			}
			for _, r := range rb.Records {
				if off := rb.FirstOffset + r.OffsetDelta; off >= next && off < end {
					out = append(out, rawRecord{off, r.Key, r.Value, rb.Control, rb.ProducerID})
				}
			}
			next = rb.LastOffset() + 1
		}
	}
	return out
}

// writeSeeds adds real record bytes to the committed fuzz corpus when ZK2KAFKA_WRITE_SEEDS is
// set (run once per stack profile; the files are then committed).
func writeSeeds(t *testing.T, profile string, recs []rawRecord) {
	if os.Getenv("ZK2KAFKA_WRITE_SEEDS") == "" {
		return
	}
	for i, r := range recs {
		if r.control {
			continue
		}
		name := fmt.Sprintf("real-%s-%02d", profile, i)
		writeSeed(t, "FuzzDecodeKey", name, fmt.Sprintf("[]byte(%s)", strconv.Quote(string(r.key))))
		if r.value != nil && len(r.key) >= 2 {
			kv := int16(r.key[0])<<8 | int16(r.key[1])
			writeSeed(t, "FuzzDecodeValue", name, fmt.Sprintf("int16(%d)\n[]byte(%s)", kv, strconv.Quote(string(r.value))))
		}
	}
}

func writeSeed(t *testing.T, fuzz, name, body string) {
	dir := filepath.Join("testdata", "fuzz", fuzz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("go test fuzz v1\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
