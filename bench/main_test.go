// Package bench_test holds the performance benchmarks of issues 3 and 4 against the real local
// stack: `migrate plan` against a naive serial ZooKeeper reader and a raw pipelined one (the
// ceiling of this ZooKeeper), and `migrate copy` against a naive one-commit-per-partition writer.
// They are benchmarks, not timed tests: nothing here asserts a duration. scripts/bench runs them
// on a stack of its own, computes the ratios from the -bench output and adds peak RSS.
//
//	ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env ZK2KAFKA_BENCH_SIZES=10000,100000 \
//	  go test -run '^$' -bench . -benchtime 1x -timeout 60m ./bench/
package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// Environment of the benchmarks.
const (
	// EnvSizes lists the sizes in offsets, comma separated (default "10000"); each must be a
	// positive multiple of offsetsPerGroup.
	EnvSizes = "ZK2KAFKA_BENCH_SIZES"
	// EnvNaiveMax bounds the partitions the naive writer commits (default 10000): one request
	// per partition makes it far too slow for 100k and more, and its rate does not depend on
	// how many partitions there are, so a subset gives the same offsets/s.
	EnvNaiveMax = "ZK2KAFKA_BENCH_NAIVE_MAX"
	// EnvSerialMax bounds the offset znodes the serial reader reads (default: all), for the
	// same reason at 1M.
	EnvSerialMax = "ZK2KAFKA_BENCH_SERIAL_MAX"
	// EnvCPUProfile, when set, is a file prefix: each timed loop of raw-pipelined, plan, copy
	// and copy-gates writes a CPU profile of that loop alone to <prefix>-<size>-<name>.prof.
	// go test's -cpuprofile also profiles the seeding and the pool sweep, which hide the cost
	// of the code measured. (A copy loop's profile has its untimed per-iteration set-up too:
	// DeleteGroups and a fresh plan.)
	EnvCPUProfile = "ZK2KAFKA_BENCH_CPUPROFILE"
	// EnvPairs is how many rounds BenchmarkPlan's paired loop times per iteration (default 4):
	// one pass each of the raw, blind and plan readers, in an order that changes every round.
	EnvPairs = "ZK2KAFKA_BENCH_PAIRS"
)

// The seeded shape: every group has 10 topics x 10 partitions of a shared pool of 10 topics.
const (
	topicsPerGroup   = 10
	partitions       = 10
	offsetsPerGroup  = topicsPerGroup * partitions
	recordsPerPart   = 1000
	defaultNaiveMax  = 10000
	defaultPairs     = 4
	benchSeedTimeout = 30 * time.Minute
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// sizes parses EnvSizes.
func sizes(b *testing.B) []int {
	b.Helper()
	raw := os.Getenv(EnvSizes)
	if raw == "" {
		raw = "10000"
	}
	var out []int
	for f := range strings.SplitSeq(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n%offsetsPerGroup != 0 {
			b.Fatalf("%s=%q: %q is not a positive multiple of %d", EnvSizes, raw, f, offsetsPerGroup)
		}
		out = append(out, n)
	}
	return out
}

// envLimit reads an optional positive bound; def when unset.
func envLimit(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// fixture is one seeded legacy store: n offsets under a chroot of their own, with topics in
// Kafka that hold them (log end 1000, every offset in range), so a plan is all zk-only writes.
type fixture struct {
	stack  *stacktest.Stack
	spec   seed.Spec // with the chroot
	chroot string
}

// zkServers is the connect string the adapters and the CLI get: the chroot isolates the
// benchmark's groups from everything else on a shared ZooKeeper.
func (f *fixture) zkServers() string { return f.stack.ZK + f.chroot }

// newFixture seeds n offsets once, outside any timing, and removes the znodes and topics when b
// ends. Names are unique to the run, so a shared stack is safe.
func newFixture(b *testing.B, n int) *fixture {
	b.Helper()
	st := stacktest.Get(b)
	f := &fixture{stack: st, chroot: "/" + stacktest.Name(b, "bench")}
	f.spec = seed.Spec{
		Seed: int64(n), Groups: n / offsetsPerGroup, TopicsPerGroup: topicsPerGroup, Topics: topicsPerGroup,
		Partitions: partitions, Records: recordsPerPart,
		GroupPrefix: stacktest.Name(b, "g"), TopicPrefix: stacktest.Name(b, "t"), Chroot: f.chroot,
	}
	ctx, cancel := context.WithTimeout(context.Background(), benchSeedTimeout)
	defer cancel()
	// Cleanup is registered before seeding so that a half-done seed is removed too.
	b.Cleanup(func() { f.remove(b) })
	start := time.Now()
	res, err := seed.Run(ctx, st.ZK, []string{st.Kafka}, f.spec, quietLogger())
	if err != nil {
		b.Fatalf("seed %d offsets: %v", n, err)
	}
	res.Close()
	f.spec = res.Spec
	b.Logf("seeded %d offsets (%d groups) under %s in %s (zookeeper %s)", res.Offsets, f.spec.Groups, f.chroot,
		time.Since(start).Round(time.Millisecond), res.ZKTime.Round(time.Millisecond))
	return f
}

// planRequests lists every ZooKeeper read a plan of the fixture makes, tree order: /consumers;
// each group's offsets/, ids/ and owners/ (the last two absent: no live consumers); each of its
// topics' listing, then the Gets of that topic's partitions.
func (f *fixture) planRequests() []zkRequest {
	p := seed.Paths{Chroot: f.chroot}
	reqs := []zkRequest{{path: p.Consumers(), list: true}}
	lastGroup, lastTopic := "", ""
	f.spec.Each(func(k migrate.Key, _ int64) bool {
		if k.Group != lastGroup {
			g := p.Group(k.Group)
			reqs = append(reqs, zkRequest{g + "/offsets", true}, zkRequest{g + "/ids", true}, zkRequest{g + "/owners", true})
			lastGroup, lastTopic = k.Group, ""
		}
		if k.Topic != lastTopic {
			reqs = append(reqs, zkRequest{p.OffsetsDir(k.Group, k.Topic), true})
			lastTopic = k.Topic
		}
		reqs = append(reqs, zkRequest{p.Offset(k.Group, k.Topic, k.Partition), false})
		return true
	})
	return reqs
}

// offsetPaths lists every offset znode of the fixture, in seeding order.
func (f *fixture) offsetPaths() []string {
	paths := make([]string, 0, f.spec.Offsets())
	p := seed.Paths{Chroot: f.chroot}
	f.spec.Each(func(k migrate.Key, _ int64) bool {
		paths = append(paths, p.Offset(k.Group, k.Topic, k.Partition))
		return true
	})
	return paths
}

func (f *fixture) remove(b *testing.B) {
	start := time.Now()
	if err := removeTree(f.stack.ZK, f.chroot); err != nil {
		b.Errorf("remove %s: %v", f.chroot, err)
	}
	if err := deleteTopics(f.stack.Kafka, f.spec.TopicNames()); err != nil {
		b.Errorf("delete the benchmark's topics: %v", err)
	}
	b.Logf("removed %s and %d topics in %s", f.chroot, f.spec.Topics, time.Since(start).Round(time.Millisecond))
}

// quietLogger keeps the adapters' and the seeder's progress lines out of the -bench output,
// which scripts/bench parses; warnings still show.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// rate reports offsets/s for perOp offsets per iteration and returns it.
func rate(b *testing.B, perOp int) float64 {
	r := float64(perOp) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(r, "offsets/s")
	return r
}

// profileLoop starts a CPU profile of one timed loop when EnvCPUProfile asks for it; the
// returned stop ends it (a no-op otherwise). Call it after the set-up, stop it after the loop.
func profileLoop(b *testing.B, n int, name string) (stop func()) {
	b.Helper()
	prefix := os.Getenv(EnvCPUProfile)
	if prefix == "" {
		return func() {}
	}
	path := fmt.Sprintf("%s-%d-%s.prof", prefix, n, name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatalf("%s: %v", EnvCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatalf("%s: start the CPU profile (not with go test -cpuprofile): %v", EnvCPUProfile, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Errorf("%s: %v", path, err)
		}
	}
}

// sizeName names a size sub-benchmark: BenchmarkPlan/10000/serial.
func sizeName(n int) string { return strconv.Itoa(n) }

// serverCPU returns the CPU time (user + system) the stack's ZooKeeper server has used so far,
// from /proc and the pid file scripts/stack writes; ok is false when it cannot be read (another
// system, a stack without that file). On a 2-core box the server and the client share the cores:
// a reader's wall time follows the sum of both, so the benchmark reports both.
func serverCPU(st *stacktest.Stack) (cpu time.Duration, ok bool) { return stackCPU(st, "zookeeper") }

// brokerCPU is serverCPU for the stack's Kafka broker: plan's Kafka reads cost CPU on the same
// cores too, which the raw reader does not spend.
func brokerCPU(st *stacktest.Stack) (cpu time.Duration, ok bool) { return stackCPU(st, "kafka") }

// stackCPU returns the CPU time used so far by the stack's process whose pid is in <name>.pid.
func stackCPU(st *stacktest.Stack, name string) (cpu time.Duration, ok bool) {
	pid, err := os.ReadFile(filepath.Join(st.Dir, name+".pid"))
	if err != nil {
		return 0, false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		return 0, false
	}
	// Fields after "(comm)": state is the first, utime and stime the 12th and 13th, in ticks.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux architecture Go
// runs on.
const clockTicks = 100
