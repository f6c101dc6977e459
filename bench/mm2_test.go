package bench_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// syncEvery is how far apart the benchmark's offset syncs are: every 10th source offset, as
// MirrorMaker 2 with offset.lag.max=10 at best (the mm2 stack saw them further apart).
const syncEvery = 10

// BenchmarkPlanMM2 measures what the MirrorMaker 2 translation adds to `migrate plan`: the
// plain plan of the seeded offsets beside the plan of the same offsets translated through an
// offset-syncs topic and a checkpoints topic, both read whole in every pass (as plan reads them
// once per run). The target is the seeded cluster itself under the identity policy, its syncs
// pinning every syncEvery-th source offset to itself, and every seeded group checkpointed on
// every partition (the most checkpoints a run can meet): both plans read the same znodes,
// topics and groups and write the same number of partitions, so the difference is the
// translation's (the records read and every offset placed). "syncs" times the read of the two
// topics alone.
func BenchmarkPlanMM2(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(sizeName(n), func(b *testing.B) { benchPlanMM2(b, n) })
	}
}

func benchPlanMM2(b *testing.B, n int) {
	f := newFixture(b, n)
	alias := stacktest.Name(b, "bench")
	syncs := f.offsetSyncs(b, alias)
	cps := f.checkpoints(b, alias)
	var plainRate, translatedRate float64
	b.Run("plain", func(b *testing.B) {
		ctx := context.Background()
		legacy, kafka := openAdapters(b, f)
		runtime.GC()
		for b.Loop() {
			streamPlan(b, ctx, legacy, kafka, n)
		}
		plainRate = rate(b, n)
	})
	b.Run("syncs", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			readTranslator(b, ctx, f, alias, syncs, cps)
		}
		b.ReportMetric(float64(syncs+cps)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("translated", func(b *testing.B) {
		ctx := context.Background()
		legacy, kafka := openAdapters(b, f)
		runtime.GC()
		for b.Loop() {
			streamPlan(b, ctx, migrate.Translated(legacy, readTranslator(b, ctx, f, alias, syncs, cps)), kafka, n)
		}
		translatedRate = rate(b, n)
	})
	// The loops above ran one after the other on a box whose speed drifts between them (and the
	// first pass warms ZooKeeper's and Kafka's caches for the next): single passes of each,
	// alternated in both orders, compare them under the same conditions.
	b.Run("paired", func(b *testing.B) {
		ctx := context.Background()
		legacy, kafka := openAdapters(b, f)
		plain := func() { streamPlan(b, ctx, legacy, kafka, n) }
		translated := func() {
			streamPlan(b, ctx, migrate.Translated(legacy, readTranslator(b, ctx, f, alias, syncs, cps)), kafka, n)
		}
		timed := func(pass func()) time.Duration {
			start := time.Now()
			pass()
			return time.Since(start)
		}
		var ratios []float64
		i := 0
		for b.Loop() {
			var p, t time.Duration
			if i%2 == 0 {
				p, t = timed(plain), timed(translated)
			} else {
				t, p = timed(translated), timed(plain)
			}
			ratios = append(ratios, t.Seconds()/p.Seconds())
			i++
		}
		b.ReportMetric(median(ratios), "translated/plain")
	})
	if plainRate > 0 && translatedRate > 0 {
		b.Logf("%d offsets, %d offset syncs: translated plan %.0f offsets/s, plain %.0f offsets/s (the translated plan takes %.2fx the plain one's time)",
			n, syncs, translatedRate, plainRate, plainRate/translatedRate)
	}
}

// readTranslator reads the benchmark's offset-syncs and checkpoints topics with mm2log, as plan
// does, and returns the translator over them.
func readTranslator(b *testing.B, ctx context.Context, f *fixture, alias string, syncs, cps int) *mm2log.Translator {
	b.Helper()
	r, err := mm2log.Open(ctx, mm2log.Config{Bootstrap: []string{f.stack.Kafka}, Cluster: "source", Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			b.Errorf("close mm2log reader: %v", err)
		}
	}()
	recs := &mm2log.Records{Syncs: r, SyncsTopic: mm2log.Topic(alias), Checkpoints: r, CheckpointsTopic: mm2log.CheckpointsTopic(alias, "."),
		Policy: mm2.Policy{Name: mm2.PolicyIdentity}}
	tr, err := recs.Next(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if tr.Syncs() != syncs || tr.Checkpoints() != cps {
		b.Fatalf("read %d offset syncs and %d checkpoints, want %d and %d", tr.Syncs(), tr.Checkpoints(), syncs, cps)
	}
	return tr
}

// offsetSyncs writes mm2-offset-syncs.<alias>.internal on the seeded cluster: for every seeded
// partition, a sync of each syncEvery-th offset of its records to itself, in upstream order as
// MirrorMaker 2 writes them. It returns how many; the topic is deleted when b ends.
func (f *fixture) offsetSyncs(b *testing.B, alias string) int {
	b.Helper()
	topic := mm2log.Topic(alias)
	b.Cleanup(func() {
		if err := deleteTopics(f.stack.Kafka, []string{topic}); err != nil {
			b.Errorf("delete %s: %v", topic, err)
		}
	})
	var msgs []*sarama.ProducerMessage
	for _, t := range f.spec.TopicNames() {
		for p := range int32(partitions) {
			for off := int64(0); off < recordsPerPart; off += syncEvery {
				key := binary.BigEndian.AppendUint16(nil, uint16(len(t)))
				key = binary.BigEndian.AppendUint32(append(key, t...), uint32(p))
				value := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(off)), uint64(off))
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(key), Value: sarama.ByteEncoder(value)})
			}
		}
	}
	f.produceTopic(b, topic, msgs)
	return len(msgs)
}

// checkpoints writes <alias>.checkpoints.internal on the seeded cluster: a checkpoint of every
// seeded group's offset (pinned exactly, so each is taken over the syncs' rounding). It returns how
// many; the topic is deleted when b ends.
func (f *fixture) checkpoints(b *testing.B, alias string) int {
	b.Helper()
	topic := mm2log.CheckpointsTopic(alias, ".")
	b.Cleanup(func() {
		if err := deleteTopics(f.stack.Kafka, []string{topic}); err != nil {
			b.Errorf("delete %s: %v", topic, err)
		}
	})
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...) }
	var msgs []*sarama.ProducerMessage
	f.spec.Each(func(k migrate.Key, offset int64) bool {
		up := offset // MirrorMaker 2 pins it exactly: higher than the syncs place it, so the checkpoint is taken
		key := binary.BigEndian.AppendUint32(str(str(nil, k.Group), k.Topic), uint32(k.Partition))
		value := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint16(nil, 0), uint64(up)), uint64(up))
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(key), Value: sarama.ByteEncoder(str(value, ""))})
		return true
	})
	f.produceTopic(b, topic, msgs)
	return len(msgs)
}

// produceTopic creates a one-partition topic and writes msgs to it in order.
func (f *fixture) produceTopic(b *testing.B, topic string, msgs []*sarama.ProducerMessage) {
	b.Helper()
	admin, err := sarama.NewClusterAdmin([]string{f.stack.Kafka}, saramaConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := admin.Close(); err != nil {
			b.Errorf("close kafka admin: %v", err)
		}
	}()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		b.Fatalf("create %s: %v", topic, err)
	}
	cfg := saramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	prod, err := sarama.NewSyncProducer([]string{f.stack.Kafka}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := prod.Close(); err != nil {
			b.Errorf("close producer: %v", err)
		}
	}()
	start := time.Now()
	for i := 0; i < len(msgs); i += 1000 {
		if err := prod.SendMessages(msgs[i:min(i+1000, len(msgs))]); err != nil {
			b.Fatalf("produce to %s: %v", topic, err)
		}
	}
	b.Logf("wrote %d records to %s in %s", len(msgs), topic, time.Since(start).Round(time.Millisecond))
}
