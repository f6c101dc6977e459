package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sample is one scrape of /metrics (and of the probes) at a time.
type sample struct {
	at      time.Time
	outage  bool               // taken while Kafka was stopping, stopped or starting (scripts/stack restart)
	down    bool               // taken within the restart's down time from its start: Kafka answered nothing
	series  map[string]float64 // `name{labels}` as exposed -> value
	readyz  int                // status codes; 0 when the request failed
	healthz int
}

// sum adds the values of every series named name whose labels contain all of labels
// (`key="value"` each).
func (s sample) sum(name string, labels ...string) (float64, bool) {
	var v float64
	found := false
	for k, x := range s.series {
		n, ls, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		if !hasLabels(ls, labels) {
			continue
		}
		v += x
		found = true
	}
	return v, found
}

func hasLabels(ls string, labels []string) bool {
	for _, l := range labels {
		if !strings.Contains(ls, l) {
			return false
		}
	}
	return true
}

// parseMetrics reads the sample lines of a text exposition: `series value` each.
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	for l := range strings.Lines(text) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			continue
		}
		out[l[:i]] = v
	}
	return out
}

// scraper scrapes a running dual-commit every interval until stopped, as Prometheus would.
type scraper struct {
	mu      sync.Mutex
	samples []sample
	outage  bool
	downTo  time.Time // samples before it, while outage, are down
	stop    chan struct{}
	done    chan struct{}
}

func startScraper(r *dualRun, every time.Duration) *scraper {
	s := &scraper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			smp := sample{at: time.Now(), series: parseMetrics(r.metricsText()), readyz: r.status("/readyz"), healthz: r.status("/healthz")}
			s.mu.Lock()
			smp.outage = s.outage
			smp.down = s.outage && smp.at.Before(s.downTo)
			s.samples = append(s.samples, smp)
			s.mu.Unlock()
		}
	}()
	return s
}

// setOutage marks the samples taken from now on as taken during a restart of Kafka that keeps
// it down for down (0 when the restart is over).
func (s *scraper) setOutage(on bool, down time.Duration) {
	s.mu.Lock()
	s.outage = on
	if on {
		s.downTo = time.Now().Add(down)
	}
	s.mu.Unlock()
}

// finish stops the scraper and returns every sample; it may be called more than once.
func (s *scraper) finish() []sample {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...)
}

// status returns the status code of a GET of a path of the metrics server, 0 when it failed.
func (r *dualRun) status(p string) int {
	resp, err := http.Get(r.metrics + p)
	if err != nil {
		return 0
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0
	}
	return resp.StatusCode
}

// waitSamples waits until n more samples have been taken.
func (s *scraper) waitSamples(t *testing.T, n int) {
	t.Helper()
	count := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.samples)
	}
	want := count() + n
	waitFor(t, func() string { return fmt.Sprintf("%d samples, want %d", count(), want) }, func() bool { return count() >= want })
}
