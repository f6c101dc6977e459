package zkreader

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Benchmark layout: groups of 10 topics x 10 partitions, as many groups as ZK2KAFKA_BENCH_OFFSETS
// (default 10000) needs.
const benchTopics, benchPartitions = 10, 10

// BenchmarkRead compares, on the real ZooKeeper, three ways to fetch the same offset znodes:
//   - serial: one Get at a time on one connection, the naive reader;
//   - raw-pipelined: only the Gets, over the default pool with many in flight: the ceiling;
//   - reader: ReadGroups end to end (listing, liveness, parsing, emit).
//
// Run: ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env go test ./zkreader -run '^$' -bench Read
func BenchmarkRead(b *testing.B) {
	n := 10000
	if s := os.Getenv("ZK2KAFKA_BENCH_OFFSETS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("ZK2KAFKA_BENCH_OFFSETS=%q: want a positive number", s)
		}
		n = v
	}
	e := newEnv(b)
	groups, paths := seed(b, e, n)

	b.Run("serial", func(b *testing.B) {
		c := openT(b, Config{Servers: e.servers(), Connections: 1}).conns[0]
		for b.Loop() {
			for _, p := range paths {
				if _, _, err := c.Get(p); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportRate(b, len(paths))
	})
	b.Run("raw-pipelined", func(b *testing.B) {
		r := openT(b, Config{Servers: e.servers()})
		ctx := context.Background()
		for b.Loop() {
			err := r.fanOut(ctx, len(paths), func(c *zk.Conn, i int) error {
				_, _, err := c.Get(paths[i])
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b, len(paths))
	})
	b.Run("reader", func(b *testing.B) {
		r := openT(b, Config{Servers: e.servers()})
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			read := 0
			err := r.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
				read += len(g.Offsets)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if read != len(paths) {
				b.Fatalf("read %d offsets, seeded %d", read, len(paths))
			}
		}
		reportRate(b, len(paths))
	})
}

func reportRate(b *testing.B, perOp int) {
	b.ReportMetric(float64(perOp*b.N)/b.Elapsed().Seconds(), "offsets/s")
}

// seed writes n offsets under e's root, groups written concurrently and each group's znodes
// pipelined (WriteOffsets), and returns the groups and the full paths of the offset znodes.
func seed(b *testing.B, e *testEnv, n int) (groups, paths []string) {
	b.Helper()
	w := openT(b, Config{Servers: e.servers(), Connections: 8, InFlight: 512})
	perGroup := benchTopics * benchPartitions
	var offsets []map[migrate.TopicPartition]int64
	for g := 0; g*perGroup < n; g++ {
		name := fmt.Sprintf("bench-%06d", g)
		m := map[migrate.TopicPartition]int64{}
		for i := 0; i < perGroup && g*perGroup+i < n; i++ {
			tp := migrate.TopicPartition{Topic: fmt.Sprintf("topic-%d", i/benchPartitions), Partition: int32(i % benchPartitions)}
			m[tp] = int64(g*perGroup + i)
			paths = append(paths, fmt.Sprintf("%s/consumers/%s/offsets/%s/%d", e.root, name, tp.Topic, tp.Partition))
		}
		groups = append(groups, name)
		offsets = append(offsets, m)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(groups))
	// WriteOffsets bounds its requests by InFlight; these tokens only bound the goroutines.
	tokens := make(chan struct{}, 64)
	for i, g := range groups {
		tokens <- struct{}{}
		wg.Go(func() {
			defer func() { <-tokens }()
			errs <- w.WriteOffsets(context.Background(), g, offsets[i])
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	return groups, paths
}
