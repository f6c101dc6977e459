package bench_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// BenchmarkMirror measures `migrate dual-commit` (mirror.Mirror over the real adapters and the
// ZooKeeper watcher, CLI defaults) with every seeded offset watched: each iteration sets one
// offset znode one higher, as a legacy consumer commits, and waits until Kafka's OffsetFetch
// returns the new value. Reported: the median and p99 of that latency, the process CPU per
// mirrored change (the OffsetFetch polling of the benchmark included, so an upper bound), the
// CPU of an idle minute's worth of watching (the watch on the list of groups included), the
// time to arm every watch at start, and the latency of a group created after the start (from
// its first offset znode to Kafka).
//
//	ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env go test -run '^$' -bench Mirror -benchtime 200x ./bench/
func BenchmarkMirror(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(sizeName(n), func(b *testing.B) { benchMirror(b, n) })
	}
}

// syncCounter is the mirror's observer: it counts, and keeps when each group was last written
// (the benchmark prints nothing).
type syncCounter struct {
	synced, failed atomic.Int64
	mu             sync.Mutex
	wrote          map[string]time.Time
}

func (c *syncCounter) GroupSynced(s mirror.GroupStatus) {
	c.synced.Add(1)
	if s.Written() > 0 {
		c.mu.Lock()
		c.wrote[s.Group] = time.Now()
		c.mu.Unlock()
	}
}

func (c *syncCounter) SyncFailed([]string, error)        { c.failed.Add(1) }
func (c *syncCounter) SelectionChanged(mirror.Selection) {}
func (c *syncCounter) LoopState(mirror.LoopState)        {}
func (c *syncCounter) LegacyLag(string, int64)           {}

func (c *syncCounter) lastWrite(g string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wrote[g]
}

func benchMirror(b *testing.B, n int) {
	f := newFixture(b, n)
	legacy, kafka := openAdapters(b, f)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := zkreader.OpenWatcher(ctx, zkreader.Config{Servers: f.zkServers(), Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	obs := &syncCounter{wrote: map[string]time.Time{}}
	m := &mirror.Mirror{Legacy: legacy, Watcher: w, Kafka: kafka, Committer: kafka, Observer: obs, Execute: true,
		Metadata: func(_ string, mtime time.Time) string {
			return migrate.Provenance{Version: "bench", Mtime: mtime}.String()
		}}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- m.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("mirror: %v", err)
		}
		w.Close()
	})
	// Started: the first sync of every group, then the watcher's report of every group once
	// its watches are armed.
	groups := int64(f.spec.Groups)
	for obs.synced.Load() < 2*groups {
		select {
		case err := <-done:
			b.Fatalf("mirror stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	armed := time.Since(start)

	var keys []migrate.Key
	f.spec.Each(func(k migrate.Key, _ int64) bool { keys = append(keys, k); return true })
	current := map[migrate.Key]int64{}
	f.spec.Each(func(k migrate.Key, off int64) bool { current[k] = off; return true })
	lat := make([]time.Duration, 0, b.N)
	committed := make([]time.Duration, 0, b.N) // ZooKeeper write -> the mirror's commit returned
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		k := keys[(i*7919)%len(keys)] // spread over groups and partitions
		current[k]++
		t0 := time.Now()
		if err := legacy.WriteOffsets(ctx, k.Group, map[migrate.TopicPartition]int64{{Topic: k.Topic, Partition: k.Partition}: current[k]}); err != nil {
			b.Fatal(err)
		}
		for {
			c, err := kafka.FetchCommitted(ctx, k.Group)
			if err != nil {
				b.Fatal(err)
			}
			if c[migrate.TopicPartition{Topic: k.Topic, Partition: k.Partition}].Offset == current[k] {
				break
			}
			if time.Since(t0) > time.Minute {
				b.Fatalf("%s: not in Kafka a minute after the ZooKeeper write", k)
			}
		}
		lat = append(lat, time.Since(t0))
		committed = append(committed, obs.lastWrite(k.Group).Sub(t0))
	}
	b.StopTimer()
	cpuChanges := cpuTime(b) - cpu0
	newLat := newGroupLatency(b, ctx, legacy, kafka, keys[0].Topic, min(b.N, 50))
	idle := 5 * time.Second
	cpu1 := cpuTime(b)
	time.Sleep(idle) // the mirror alone, watching
	cpuIdle := cpuTime(b) - cpu1
	if f := obs.failed.Load(); f > 0 {
		b.Errorf("%d syncs failed", f)
	}
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
	b.ReportMetric(ms(cpuChanges)/float64(b.N), "cpu-ms/change")
	slices.Sort(committed)
	b.ReportMetric(ms(committed[min(len(committed)-1, len(committed)*99/100)]), "commit-p99-ms")
	b.ReportMetric(100*cpuIdle.Seconds()/idle.Seconds(), "idle-cpu-%")
	slices.Sort(newLat)
	b.ReportMetric(ms(newLat[len(newLat)/2]), "new-group-median-ms")
	b.ReportMetric(ms(newLat[min(len(newLat)-1, len(newLat)*99/100)]), "new-group-p99-ms")
	b.ReportMetric(armed.Seconds(), "start-s")
	b.Logf("%d offsets watched in %d groups: started (first sync + watches armed) in %s; %d changes", n, groups,
		armed.Round(time.Millisecond), b.N)
}

// newGroupLatency creates n groups one after the other while the mirror runs, each with one
// offset znode (as a legacy consumer's first commit makes /consumers/<g>/offsets/<t>/<p>), and
// returns how long each took to show in Kafka: the watch on the list of groups, the re-listing,
// the new group's read, arming and commit. Their selection is every group, as the CLI's default.
func newGroupLatency(b *testing.B, ctx context.Context, legacy *zkreader.Reader, kafka *kafkawriter.Client, topic string, n int) []time.Duration {
	b.Helper()
	tp := migrate.TopicPartition{Topic: topic, Partition: 0}
	out := make([]time.Duration, 0, n)
	for i := range n {
		g := fmt.Sprintf("new-%d-%d", time.Now().UnixNano(), i)
		t0 := time.Now()
		if err := legacy.WriteOffsets(ctx, g, map[migrate.TopicPartition]int64{tp: 1}); err != nil {
			b.Fatal(err)
		}
		for {
			c, err := kafka.FetchCommitted(ctx, g)
			if err != nil {
				b.Fatal(err)
			}
			if c[tp].Offset == 1 {
				break
			}
			if time.Since(t0) > time.Minute {
				b.Fatalf("new group %s: not in Kafka a minute after its first offset", g)
			}
		}
		out = append(out, time.Since(t0))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(fmt.Errorf("getrusage: %w", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
