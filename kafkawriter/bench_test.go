package kafkawriter

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// benchTopic is shared by benchmark runs: 100 partitions, offsets only, never deleted.
const (
	benchTopic      = "kafkawriter-bench-p100"
	benchPartitions = 100
)

// benchBatch builds ZK2KAFKA_BENCH_OFFSETS (default 10,000) offsets as groups of 100 partitions.
func benchBatch(b *testing.B) ([]GroupCommits, int) {
	n := 10000
	if v := os.Getenv("ZK2KAFKA_BENCH_OFFSETS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("ZK2KAFKA_BENCH_OFFSETS=%q: want a positive integer", v)
		}
	}
	prefix := stacktest.Name(b, "bench")
	meta := migrate.Provenance{Version: "bench", Mtime: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}.String()
	var batch []GroupCommits
	for left, g := n, 0; left > 0; g++ {
		size := min(left, benchPartitions)
		gc := GroupCommits{Group: fmt.Sprintf("%s-%05d", prefix, g)}
		for p := range size {
			gc.Commits = append(gc.Commits, migrate.Commit{TopicPartition: tp(benchTopic, int32(p)), Offset: int64(g + p), Metadata: meta})
		}
		batch = append(batch, gc)
		left -= size
	}
	return batch, n
}

func BenchmarkCommit(b *testing.B) {
	c, _ := openStack(b)
	ctx := context.Background()
	if err := c.CreateTopic(ctx, benchTopic, benchPartitions); err != nil {
		b.Fatal(err)
	}
	batch, n := benchBatch(b)

	b.Run(fmt.Sprintf("client/offsets=%d", n), func(b *testing.B) {
		for b.Loop() {
			for _, r := range c.CommitMany(ctx, batch) {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
				for _, e := range r.Results {
					if e.Err != nil {
						b.Fatal(e.Err)
					}
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "offsets/s")
	})

	// The same batch over one connection and over the default Connections: commits of many
	// groups run in parallel only over several (see Client.groupConns).
	for _, conns := range []int{1, DefaultParallel} {
		b.Run(fmt.Sprintf("connections=%d/offsets=%d", conns, n), func(b *testing.B) {
			cc, err := Open(ctx, Config{Bootstrap: c.cfg.Bootstrap, Connections: conns})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := cc.Close(); err != nil {
					b.Error(err)
				}
			}()
			for b.Loop() {
				for _, r := range cc.CommitMany(ctx, batch) {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "offsets/s")
		})
	}

	// The naive writer: one OffsetCommit request per partition, one after another.
	b.Run(fmt.Sprintf("naive/offsets=%d", n), func(b *testing.B) {
		for b.Loop() {
			for _, gc := range batch {
				coord, err := c.sc.Coordinator(gc.Group)
				if err != nil {
					b.Fatal(err)
				}
				for _, cm := range gc.Commits {
					req := sarama.NewOffsetCommitRequest(c.sc.Config(), gc.Group)
					req.AddBlockWithLeaderEpoch(cm.Topic, cm.Partition, cm.Offset, -1, 0, cm.Metadata)
					resp, err := coord.CommitOffset(req)
					if err != nil {
						b.Fatal(err)
					}
					if kerr := resp.Errors[cm.Topic][cm.Partition]; kerr != sarama.ErrNoError {
						b.Fatalf("%s/%s: %v", gc.Group, cm.TopicPartition, kerr)
					}
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "offsets/s")
	})
}
