package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/cmd"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// dualWait bounds every wait for dual-commit to do something: a hang guard, not a speed check.
const dualWait = time.Minute

// lockedBuffer is the CLI's stderr, read by the test while the CLI writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// dualRun is `migrate dual-commit` running in-process until stop.
type dualRun struct {
	cancel  context.CancelFunc
	done    chan int
	stderr  *lockedBuffer
	metrics string // http://host:port
	once    sync.Once
	code    int
}

// dualCommit starts `zk2kafka migrate dual-commit` with args, metrics on a free port; it is
// stopped at the end of the test at the latest.
func (e *env) dualCommit(args ...string) *dualRun {
	e.t.Helper()
	addr := stacktest.ClosedPort(e.t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &dualRun{cancel: cancel, done: make(chan int, 1), stderr: &lockedBuffer{}, metrics: "http://" + addr}
	argv := append(append(append([]string{"--zk", e.zkURL}, e.zkArgs...), append([]string{"--kafka", e.kafkaForCLI()}, e.kafkaArgs...)...),
		append([]string{"migrate", "dual-commit", "--metrics-addr", addr}, args...)...)
	go func() { r.done <- cmd.Execute(ctx, argv, io.Discard, r.stderr) }()
	e.t.Cleanup(func() { r.stop(e.t) })
	return r
}

// stop cancels the run as SIGTERM does in main and returns its exit code.
func (r *dualRun) stop(t *testing.T) int {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.code = <-r.done:
		case <-time.After(dualWait):
			t.Errorf("dual-commit did not stop within %s of the cancel\n%s", dualWait, r.stderr)
			r.code = -1
		}
	})
	return r.code
}

// metric returns the /metrics lines of the running dual-commit.
func (r *dualRun) metricsText() string {
	resp, err := http.Get(r.metrics + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return ""
	}
	return string(b)
}

// healthz returns the status code and body of /healthz.
func (r *dualRun) healthz(t *testing.T) (int, string) {
	t.Helper()
	return r.get(t, "/healthz")
}

// get returns the status code and body of a path of the metrics server.
func (r *dualRun) get(t *testing.T, p string) (int, string) {
	t.Helper()
	resp, err := http.Get(r.metrics + p)
	if err != nil {
		t.Fatalf("GET %s: %v", p, err)
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitMetric waits until /metrics holds line, failing with the last scrape and the log.
func (r *dualRun) waitMetric(t *testing.T, line string) {
	t.Helper()
	deadline := time.Now().Add(dualWait)
	var last string
	for time.Now().Before(deadline) {
		if last = r.metricsText(); hasSample(last, line) {
			return
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	t.Fatalf("/metrics never showed %s\n--- last scrape:\n%s\n--- log:\n%s", line, last, r.stderr)
}

// hasSample says whether a sample line of the scrape starts with line; the # HELP and # TYPE
// lines do not count (a help text starting "1 when ..." matched "..._ready 1" before the
// instance was ready).
func hasSample(scrape, line string) bool {
	for l := range strings.Lines(scrape) {
		if !strings.HasPrefix(l, "#") && strings.HasPrefix(l, line) {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing with what() after dualWait.
func waitFor(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(dualWait)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	t.Fatalf("not reached within %s: %s", dualWait, what())
}

// monotonic samples a group's Kafka commits until stopped and records every step backwards.
type monotonic struct {
	mu        sync.Mutex
	last      map[migrate.TopicPartition]int64
	backwards []string
	samples   int
	stop      chan struct{}
	done      chan struct{}
}

func (e *env) watchMonotonic(group string) *monotonic {
	m := &monotonic{last: map[migrate.TopicPartition]int64{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			got, err := e.kw.FetchCommitted(ctx, group)
			cancel()
			if err != nil {
				continue // a transient fetch failure is not a step backwards
			}
			m.mu.Lock()
			m.samples++
			for tp, c := range got {
				if prev, ok := m.last[tp]; ok && c.Offset < prev {
					m.backwards = append(m.backwards, tp.String()+": "+itoa(prev)+" -> "+itoa(c.Offset))
				}
				m.last[tp] = c.Offset
			}
			m.mu.Unlock()
		}
	}()
	e.t.Cleanup(m.finish)
	return m
}

func (m *monotonic) finish() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// check stops sampling and fails the test for any step backwards.
func (m *monotonic) check(t *testing.T) {
	t.Helper()
	m.finish()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.samples == 0 {
		t.Error("the Kafka offsets were never sampled")
	}
	if len(m.backwards) > 0 {
		t.Errorf("Kafka offsets moved backwards: %v", m.backwards)
	}
}

// committing is a consumer-group handler that processes (records) every record and commits
// after every batch of records, as a real consumer does.
type committing struct {
	batch int
	mu    sync.Mutex
	first map[migrate.TopicPartition]int64   // where each claim started: the committed offset
	seen  map[migrate.TopicPartition][]int64 // offsets processed, in order, over all claims
}

func newCommitting(batch int) *committing {
	return &committing{batch: batch, first: map[migrate.TopicPartition]int64{}, seen: map[migrate.TopicPartition][]int64{}}
}

func (*committing) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*committing) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *committing) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	k := tp(claim.Topic(), claim.Partition())
	h.mu.Lock()
	if _, ok := h.first[k]; !ok {
		h.first[k] = claim.InitialOffset()
	}
	h.mu.Unlock()
	n := 0
	for msg := range claim.Messages() {
		h.mu.Lock()
		h.seen[k] = append(h.seen[k], msg.Offset)
		h.mu.Unlock()
		sess.MarkMessage(msg, "")
		if n++; n%h.batch == 0 {
			sess.Commit()
		}
	}
	sess.Commit()
	return nil
}

func (h *committing) processed(k migrate.TopicPartition) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.seen[k]...)
}

func (h *committing) start(k migrate.TopicPartition) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.first[k]
	return v, ok
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
