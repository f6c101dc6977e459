package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// BenchmarkDualCommitProcess measures `zk2kafka migrate dual-commit --execute` as an operator
// runs it: the built binary in a process of its own, watching every seeded offset (at 1M, 10k
// groups of 100). Reported: start-s, from exec to /readyz answering 200 (first sync of every
// group, every watch set, the lease held); rss-mb, the process's peak resident set (VmHWM) at
// the end; zk-watches, the watches ZooKeeper holds once started (mntr's zk_watch_count, less
// what it held before); idle-cpu-%, the process's CPU over an idle stretch in % of one core;
// median-ms and p99-ms, a ZooKeeper offset set until Kafka's OffsetFetch returns it
// (dualChanges changes); resync-s, after the process was stopped (SIGSTOP) past its ZooKeeper session
// timeout, so that ZooKeeper expired its session and dropped every watch: from SIGCONT until a
// change made during the stop is in Kafka and /readyz answers 200 again.
//
// Each size runs on both paths of the watcher, each on a fixture of its own: "persistent", the
// one persistent recursive watch that ZooKeeper 3.6+ gets, and "one-shot", the watches per
// folder and znode of older servers, forced on the same server by the hidden
// ZK2KAFKA_DEV_ONE_SHOT_WATCHES=1.
//
//	ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env ZK2KAFKA_BENCH_SIZES=1000000 \
//	  go test -run '^$' -bench DualCommitProcess -benchtime 1x -timeout 60m -v ./bench/
func BenchmarkDualCommitProcess(b *testing.B) {
	for _, n := range sizes(b) {
		for _, path := range []struct {
			name    string
			oneShot bool
		}{{"persistent", false}, {"one-shot", true}} {
			b.Run(sizeName(n)+"/"+path.name, func(b *testing.B) { benchDualCommitProcess(b, n, path.oneShot) })
		}
	}
}

// dualChanges is how many offset changes the latency is measured on. A fixed count, not b.N:
// the benchmark is meant to run once (-benchtime 1x), as seeding 1M offsets takes minutes.
const dualChanges = 200

// dualSessionTimeout is the dual-commit's --zk-session-timeout here: short, so that the
// expiry part does not take minutes, and above the server's minimum (2 x tickTime).
const dualSessionTimeout = 6 * time.Second

func benchDualCommitProcess(b *testing.B, n int, oneShot bool) {
	f := newFixture(b, n)
	legacy, kafka := openAdapters(b, f)
	bin := buildCLI(b)
	addr := freeAddr(b)
	watches0 := zkWatchCount(b, f.stack.ZK)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The process's log is kept when the benchmark fails, for its reason (a lost session, a
	// resync still running), and removed otherwise.
	logf, err := os.CreateTemp("", "zk2kafka-dual-commit-*.log")
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("dual-commit's log kept: %s", logf.Name())
		} else {
			os.Remove(logf.Name())
		}
	})
	cmd := exec.CommandContext(ctx, bin, "migrate", "dual-commit", "--execute", "--zk", f.zkServers(),
		"--kafka", f.stack.Kafka, "--metrics-addr", addr, "--zk-session-timeout", dualSessionTimeout.String(),
		"--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if oneShot {
		cmd.Env = append(os.Environ(), "ZK2KAFKA_DEV_ONE_SHOT_WATCHES=1")
	}
	cmd.Cancel = func() error {
		// Continued first: a failure in the expiry part may leave the process stopped.
		if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
			return err
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cancel()
		if err := <-exited; err != nil && ctx.Err() == nil {
			b.Errorf("dual-commit: %v (log %s)", err, logf.Name())
		}
	}()
	ready := func(limit time.Duration) time.Duration {
		b.Helper()
		t0 := time.Now()
		for !readyz(addr) {
			select {
			case err := <-exited:
				b.Fatalf("dual-commit exited: %v (log %s)", err, logf.Name())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Since(t0) > limit {
				b.Fatalf("dual-commit not ready after %s (log %s)", limit, logf.Name())
			}
		}
		return time.Since(t0)
	}
	ready(30 * time.Minute)
	started := time.Since(start)
	watches := zkWatchCount(b, f.stack.ZK) - watches0

	var keys []migrate.Key
	current := map[migrate.Key]int64{}
	f.spec.Each(func(k migrate.Key, off int64) bool { keys = append(keys, k); current[k] = off; return true })
	// below picks the first key from i on (spread over groups and partitions) whose offset
	// can go one up and stay within the log (recordsPerPart records each): the seeder puts some
	// at the log end, and one above it is never mirrored (plan's above-log-end, --out-of-range=fail).
	below := func(i int) migrate.Key {
		k := keys[(i*7919)%len(keys)]
		for j := 1; current[k] >= recordsPerPart; j++ {
			k = keys[(i*7919+j)%len(keys)]
		}
		return k
	}
	change := func(i int) time.Duration {
		b.Helper()
		k := below(i)
		current[k]++
		t0 := time.Now()
		writeAndWait(b, ctx, legacy, kafka, k, current[k], t0)
		return time.Since(t0)
	}

	lat := make([]time.Duration, 0, dualChanges)
	for i := range dualChanges {
		lat = append(lat, change(i))
	}

	const idle = 10 * time.Second
	cpu0 := procCPU(b, cmd.Process.Pid)
	time.Sleep(idle) // the process alone, watching
	cpuIdle := procCPU(b, cmd.Process.Pid) - cpu0

	// The session expiry: stopped past the timeout, a change made meanwhile, then continued.
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	k := below(dualChanges)
	current[k]++
	if err := legacy.WriteOffsets(ctx, k.Group, map[migrate.TopicPartition]int64{{Topic: k.Topic, Partition: k.Partition}: current[k]}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(3 * dualSessionTimeout) // for ZooKeeper to expire the stopped session; not an assertion
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	waitKafka(b, ctx, kafka, k, current[k], t0) // the change made while stopped: no write again
	ready(30 * time.Minute)
	resync := time.Since(t0)

	slices.Sort(lat)
	b.ReportMetric(started.Seconds(), "start-s")
	b.ReportMetric(float64(procStatusKB(b, cmd.Process.Pid, "VmHWM"))/1024, "rss-mb")
	b.ReportMetric(float64(watches), "zk-watches")
	b.ReportMetric(100*cpuIdle.Seconds()/idle.Seconds(), "idle-cpu-%")
	b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
	b.ReportMetric(resync.Seconds(), "resync-s")
	b.Logf("%d offsets in %d groups: ready in %s, %d watches, resync after a session expiry %s",
		n, f.spec.Groups, started.Round(time.Millisecond), watches, resync.Round(time.Millisecond))
}

// writeAndWait sets k's offset znode to off and waits until Kafka's OffsetFetch returns it.
func writeAndWait(b *testing.B, ctx context.Context, legacy *zkreader.Reader, kafka *kafkawriter.Client, k migrate.Key, off int64, t0 time.Time) {
	b.Helper()
	tp := migrate.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	if err := legacy.WriteOffsets(ctx, k.Group, map[migrate.TopicPartition]int64{tp: off}); err != nil {
		b.Fatal(err)
	}
	waitKafka(b, ctx, kafka, k, off, t0)
}

// waitKafka waits until Kafka's OffsetFetch returns off for k.
func waitKafka(b *testing.B, ctx context.Context, kafka *kafkawriter.Client, k migrate.Key, off int64, t0 time.Time) {
	b.Helper()
	tp := migrate.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	for {
		c, err := kafka.FetchCommitted(ctx, k.Group)
		if err != nil {
			b.Fatal(err)
		}
		if c[tp].Offset == off {
			return
		}
		if time.Since(t0) > 5*time.Minute {
			b.Fatalf("%s: %d not in Kafka 5 minutes after the ZooKeeper write", k, off)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// buildCLI builds the zk2kafka binary of this checkout into a temporary folder.
func buildCLI(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "zk2kafka")
	out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func readyz(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// zkWatchCount is zk_watch_count of the `mntr` four-letter word of the first server.
func zkWatchCount(b *testing.B, servers string) int64 {
	b.Helper()
	addr, _, _ := strings.Cut(servers, ",")
	addr, _, _ = strings.Cut(addr, "/")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("mntr")); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "zk_watch_count\t"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("mntr of %s: no zk_watch_count (is mntr in 4lw.commands.whitelist?)", addr)
	return 0
}

// procCPU is a process's user + system CPU time so far, from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (in parentheses, which may hold spaces): utime is the
	// 14th field of the line, stime the 15th, in clock ticks (100 a second on Linux).
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	fields := strings.Fields(rest)
	ut, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procStatusKB is a kB field of /proc/<pid>/status (VmHWM: the peak resident set).
func procStatusKB(b *testing.B, pid int, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("/proc/%d/status: no %s", pid, field)
	return 0
}
