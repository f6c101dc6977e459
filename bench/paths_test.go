package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// BenchmarkReadPaths measures plan and copy --execute on zkreader's two read paths side by side
// in one run: multiRead batches (ZooKeeper 3.6+, what the stack's 3.8 gets) and single requests
// (what servers before 3.6 get, forced here with Config.NoMultiRead). Each round times one
// plan and one copy on each path, and a copy --recheck=gates on multiRead (the floor of a copy
// whose re-check reads no offset znode), the order rotating from round to round, and
// reads ZooKeeper's CPU around each pass. Copy is Copier.Run with the CLI's defaults (full
// re-check, read-back), after its groups were deleted from Kafka and the plan read, both
// outside the timing, as in BenchmarkCopy.
//
//	ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env ZK2KAFKA_BENCH_SIZES=100000 ZK2KAFKA_BENCH_PATH_ROUNDS=3 \
//	  go test -run '^$' -bench ReadPaths -benchtime 1x -v ./bench/
func BenchmarkReadPaths(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(sizeName(n), func(b *testing.B) { benchReadPaths(b, n) })
	}
}

// EnvPathRounds is how many rounds BenchmarkReadPaths times per iteration (default 3): one pass
// each of plan and copy on each path, in an order that rotates every round.
const (
	EnvPathRounds     = "ZK2KAFKA_BENCH_PATH_ROUNDS"
	defaultPathRounds = 3
)

// pathPass is one timed pass: plan or copy on one path.
type pathPass struct {
	name      string
	copy      bool
	gatesOnly bool // copy --recheck=gates: the floor of a copy whose re-check reads no znode
	legacy    *zkreader.Reader
	times     []float64
	cpu       passCPU // summed over the passes
}

// passCPU is the CPU each process spent over a pass: on a 2-core machine the three share the
// cores, so a pass's time follows their sum as much as any round trip.
type passCPU struct{ zookeeper, kafka, self time.Duration }

func (c *passCPU) add(o passCPU) {
	c.zookeeper += o.zookeeper
	c.kafka += o.kafka
	c.self += o.self
}

// cpuNow reads the CPU used so far by ZooKeeper, the broker and this process.
func cpuNow(f *fixture) (passCPU, bool) {
	z, okZ := serverCPU(f.stack)
	k, okK := brokerCPU(f.stack)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return passCPU{}, false
	}
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return passCPU{zookeeper: z, kafka: k, self: self}, okZ && okK
}

// cpuSince is the CPU spent since before (zero when either reading failed).
func cpuSince(f *fixture, before passCPU, okBefore bool) passCPU {
	after, ok := cpuNow(f)
	if !ok || !okBefore {
		return passCPU{}
	}
	return passCPU{zookeeper: after.zookeeper - before.zookeeper, kafka: after.kafka - before.kafka, self: after.self - before.self}
}

func benchReadPaths(b *testing.B, n int) {
	f := newFixture(b, n)
	ctx := context.Background()
	sc, err := newSarama(f.stack.Kafka)
	if err != nil {
		b.Fatal(err)
	}
	groups := make([]string, f.spec.Groups)
	for i := range groups {
		groups[i] = f.spec.GroupName(i)
	}
	b.Cleanup(func() {
		if err := deleteGroups(sc, groups); err != nil {
			b.Errorf("delete the benchmark's groups: %v", err)
		}
		if err := sc.Close(); err != nil {
			b.Errorf("close kafka client: %v", err)
		}
	})
	fast, kafka := openAdapters(b, f)
	single, err := zkreader.Open(ctx, zkreader.Config{Servers: f.zkServers(), Logger: quietLogger(), NoMultiRead: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(single.Close)
	passes := []*pathPass{
		{name: "plan multiRead", legacy: fast}, {name: "plan single", legacy: single},
		{name: "copy multiRead", copy: true, legacy: fast}, {name: "copy single", copy: true, legacy: single},
		{name: "copy gates-only", copy: true, gatesOnly: true, legacy: fast},
	}
	dir := b.TempDir()
	rounds := envLimit(b, EnvPathRounds, defaultPathRounds)
	iter := 0
	for b.Loop() {
		for r := range rounds {
			for k := range passes {
				p := passes[(k+r)%len(passes)]
				iter++
				el, cpu := p.run(b, ctx, f, n, sc, groups, kafka, filepath.Join(dir, fmt.Sprintf("backup-%d.jsonl", iter)))
				p.times = append(p.times, el.Seconds())
				p.cpu.add(cpu)
			}
		}
	}
	med := map[string]float64{}
	for _, p := range passes {
		runs := len(p.times)
		med[p.name] = median(p.times)
		perOffset := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(runs*n) }
		b.Logf("PATHS offsets=%d %-15s median %.3f s of %d passes (min %.3f, max %.3f), CPU per offset: zookeeper %.2f us, kafka %.2f us, zk2kafka %.2f us", n, p.name,
			med[p.name], runs, slices.Min(p.times), slices.Max(p.times), perOffset(p.cpu.zookeeper), perOffset(p.cpu.kafka), perOffset(p.cpu.self))
	}
	b.Logf("PATHS offsets=%d multiRead: plan+copy %.2f s (target <= 2.5 at 100k), copy/plan %.2f (target <= 1.5); single: plan+copy %.2f s, copy/plan %.2f",
		n, med["plan multiRead"]+med["copy multiRead"], med["copy multiRead"]/med["plan multiRead"],
		med["plan single"]+med["copy single"], med["copy single"]/med["plan single"])
	b.Logf("PATHS offsets=%d multiRead/single time: plan %.2f, copy %.2f; copy multiRead / copy --recheck=gates (on multiRead) %.2f", n,
		med["plan multiRead"]/med["plan single"], med["copy multiRead"]/med["copy single"], med["copy multiRead"]/med["copy gates-only"])
}

// run times one pass and returns its time and the processes' CPU over it (0 when unreadable).
func (p *pathPass) run(b *testing.B, ctx context.Context, f *fixture, n int, sc sarama.Client, groups []string,
	kafka *kafkawriter.Client, backupPath string) (time.Duration, passCPU) {
	b.Helper()
	// Every pass starts from Kafka without the groups: plan then finds n writes, copy makes them.
	b.StopTimer()
	if err := deleteGroups(sc, groups); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	var executor *copier.Copier
	if p.copy {
		b.StopTimer()
		plan := readPlan(b, ctx, p.legacy, kafka)
		checkAllWrites(b, plan, n)
		backup, err := copier.CreateBackup(backupPath, plan.Fingerprint, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := backup.Close(); err != nil {
				b.Fatal(err)
			}
		}()
		executor = &copier.Copier{Legacy: p.legacy, Kafka: kafka, Committer: kafka, Backup: backup,
			Metadata: benchMetadata, BatchGroups: 128, Parallel: copier.DefaultParallel, GatesOnly: p.gatesOnly}
		runtime.GC()
		b.StartTimer()
		cpu0, ok0 := cpuNow(f)
		start := time.Now()
		res, err := migratetest.RunCopier(ctx, executor, plan, true)
		el := time.Since(start)
		cpu := cpuSince(f, cpu0, ok0)
		if err != nil {
			b.Fatal(err)
		}
		if c := res.Counts(); c[copier.StatusWritten] != n {
			b.Fatalf("%s: %v, want %d written and read back", p.name, c, n)
		}
		return el, cpu
	}
	runtime.GC()
	cpu0, ok0 := cpuNow(f)
	start := time.Now()
	streamPlan(b, ctx, p.legacy, kafka, n)
	el := time.Since(start)
	return el, cpuSince(f, cpu0, ok0)
}

// benchMetadata is the metadata copy writes, as BenchmarkCopy's.
func benchMetadata(_ string, e migrate.Entry) string {
	return migrate.Provenance{Version: "bench", Mtime: e.Mtime}.String()
}
