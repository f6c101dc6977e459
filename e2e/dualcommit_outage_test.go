package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// envOutage sets how long TestDualCommitKafkaOutage keeps Kafka down (seconds; default 60).
const envOutage = "ZK2KAFKA_OUTAGE_SECONDS"

// TestDualCommitKafkaOutage stops the Kafka broker of a stack of its own for 60 s under a
// running dual-commit while a legacy writer keeps committing to ZooKeeper, scrapes /metrics,
// /readyz and /healthz every second (and has a real Prometheus scrape them too, when the
// prometheus server is installed), and checks what an operator would see:
//   - the lag gauge rises with the legacy writes during the outage (Kafka's last acknowledged
//     commit stays where it was), and falls back to 0 once Kafka is back and written;
//   - the write-error counter moves during the outage, with the reason "unreachable";
//   - the instance stays ready and alive throughout (the readiness decision, deploy/README.md);
//   - the lag and write-error alert rules of deploy/prometheus/alerts.yaml fire on the series
//     scraped (promtool test rules on a file generated from them, alertsFromScrapes);
//   - each panel of the Grafana dashboard returns data from the real Prometheus (dashboard_test.go).
func TestDualCommitKafkaOutage(t *testing.T) {
	down := 60 * time.Second
	if v := os.Getenv(envOutage); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("%s=%q: want a number of seconds, at least 10", envOutage, v)
		}
		down = time.Duration(n) * time.Second
	}
	st := stacktest.Private(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	const records = 100_000 // per partition: the writer stays inside the log throughout
	topic := e.topic(records, records)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 100, 1: 100})

	run := e.dualCommit("--group", g, "--execute", "--poll-interval", "500ms")
	prom := startPrometheus(t, strings.TrimPrefix(run.metrics, "http://"))
	run.waitMetric(t, fmt.Sprintf("zk2kafka_dual_commit_lag_offsets{group=%q} 0\n", g))
	run.waitMetric(t, "zk2kafka_dual_commit_ready 1")
	sc := startScraper(run, time.Second)
	w := e.legacyWriter(g, topic, 100)

	sc.waitSamples(t, 5) // of the steady state before the outage
	sc.setOutage(true, down)
	zkAtStop := w.offset()
	t.Logf("stopping Kafka for %s; ZooKeeper at %d per partition", down, zkAtStop)
	if err := st.Restart("kafka", down, false); err != nil {
		t.Fatal(err)
	}
	sc.setOutage(false, 0)
	t.Logf("Kafka is back; ZooKeeper at %d per partition", w.offset())
	w.waitPast(t, w.offset()+1000) // the writer goes on a little after the outage
	last := w.finish(t)
	wantKafka := want(topic, map[int32]int64{0: last, 1: last})
	waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), wantKafka, run.stderr) },
		func() bool { return maps.Equal(e.offsets(g), wantKafka) })
	run.waitMetric(t, fmt.Sprintf("zk2kafka_dual_commit_lag_offsets{group=%q} 0\n", g))
	sc.waitSamples(t, 3) // of the recovered state
	samples := sc.finish()

	checkOutageSamples(t, samples, g)
	alertsFromScrapes(t, samples, g)
	if prom != nil {
		checkDashboard(t, prom, samples[0].at.Add(-time.Minute), time.Now())
	}
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit stopped with exit %d, want 0\n%s", code, run.stderr)
	}
}

// checkOutageSamples checks the scrapes: the lag rising during the outage, the errors counted
// with their reason, the probes, and the lag back at 0 at the end.
func checkOutageSamples(t *testing.T, samples []sample, g string) {
	t.Helper()
	grp := fmt.Sprintf("group=%q", g)
	var lags []float64
	var errsBefore, errsAfter float64
	reasons := map[string]float64{}
	for _, s := range samples {
		lag, _ := s.sum("zk2kafka_dual_commit_lag_offsets", grp)
		errs, _ := s.sum("zk2kafka_dual_commit_errors_total", grp)
		if !s.outage && len(lags) == 0 {
			errsBefore = errs
		}
		if s.down { // Kafka stopping or stopped: nothing can lower the lag
			lags = append(lags, lag)
		}
		if s.outage {
			errsAfter = errs
			if s.readyz != 200 || s.healthz != 200 {
				t.Errorf("%s into the outage: /readyz %d, /healthz %d; want both 200 (ready and alive during a Kafka outage)",
					s.at.Sub(samples[0].at).Round(time.Second), s.readyz, s.healthz)
			}
		}
		for k, v := range s.series {
			if strings.HasPrefix(k, "zk2kafka_dual_commit_errors_total{") && strings.Contains(k, grp) {
				reasons[labelValue(k, "reason")] = v
			}
		}
	}
	t.Logf("lag while Kafka was down, one scrape a second: %v", lags)
	t.Logf("errors by reason at the end: %v; during the outage %v -> %v", reasons, errsBefore, errsAfter)
	if len(lags) < 10 {
		t.Fatalf("%d scrapes while Kafka was down, want at least 10", len(lags))
	}
	if top := slices.Max(lags); top <= lags[0] {
		t.Errorf("the lag did not rise while Kafka was down: %v", lags)
	}
	rises := 0
	for i := 1; i < len(lags); i++ {
		if lags[i] < lags[i-1] {
			t.Errorf("the lag fell while Kafka was down, scrape %d: %v", i, lags)
			break
		}
		if lags[i] > lags[i-1] {
			rises++
		}
	}
	if rises < 3 {
		t.Errorf("the lag rose at %d scrapes while Kafka was down, want it to follow the writes (at least 3): %v", rises, lags)
	}
	if errsAfter <= errsBefore {
		t.Errorf("zk2kafka_dual_commit_errors_total of group %s did not move during the outage (%v -> %v)", g, errsBefore, errsAfter)
	}
	if reasons[kafkawriter.ReasonUnreachable] == 0 {
		t.Errorf("no write error with reason %q; by reason: %v", kafkawriter.ReasonUnreachable, reasons)
	}
	if end, _ := samples[len(samples)-1].sum("zk2kafka_dual_commit_lag_offsets", grp); end != 0 {
		t.Errorf("lag %v at the last scrape, want 0 once Kafka is back", end)
	}
}

// labelValue returns the value of label name in an exposed series `name{a="b",...}`.
func labelValue(series, name string) string {
	_, rest, ok := strings.Cut(series, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// legacyWriter commits to ZooKeeper as a legacy consumer does, every 250 ms, both partitions
// at the same offset, step ahead each time, until finished; ZooKeeper stays up throughout.
type legacyWriter struct {
	off  atomic.Int64
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func (e *env) legacyWriter(g, topic string, from int64) *legacyWriter {
	const step = 50
	w := &legacyWriter{stop: make(chan struct{}), done: make(chan struct{})}
	w.off.Store(from)
	go func() {
		defer close(w.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			next := w.off.Load() + step
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := e.zr.WriteOffsets(ctx, g, map[migrate.TopicPartition]int64{tp(topic, 0): next, tp(topic, 1): next})
			cancel()
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			w.off.Store(next)
		}
	}()
	e.t.Cleanup(func() { w.finish(e.t) })
	return w
}

// offset is the latest offset written.
func (w *legacyWriter) offset() int64 { return w.off.Load() }

// waitPast waits until the writer has written off.
func (w *legacyWriter) waitPast(t *testing.T, off int64) {
	t.Helper()
	waitFor(t, func() string { return fmt.Sprintf("the legacy writer at %d, want %d", w.offset(), off) },
		func() bool { return w.offset() >= off })
}

// finish stops the writer and returns its last offset; a write that failed fails the test.
func (w *legacyWriter) finish(t *testing.T) int64 {
	t.Helper()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Errorf("legacy writer: %v", w.err)
		w.err = nil
	}
	return w.off.Load()
}
