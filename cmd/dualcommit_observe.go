package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/term"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

func (realStores) OpenWatcher(ctx context.Context, g *globalOptions, d *deps) (migrate.LegacyWatcher, func(), error) {
	if err := g.needZK(); err != nil {
		return nil, nil, err
	}
	w, err := zkreader.OpenWatcher(ctx, zkreader.Config{
		Servers: g.zkServers, SessionTimeout: g.zkSessionTimeout, InFlight: g.zkInFlight, Auth: g.zkAuth, Logger: d.logger,
	})
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}

// dualObserver turns what the mirror reports into logs, metrics, the status line and /healthz.
type dualObserver struct {
	log     *slog.Logger
	stderr  any
	execute bool
	m       *dualMetrics

	mu       sync.Mutex
	phase    map[string]migrate.Phase
	lag      map[string]int64
	written  int
	errors   int
	lastErr  error     // the latest whole-store failure, cleared by a successful sync
	lastSync time.Time // of any group
}

func newDualObserver(d *deps, execute bool) *dualObserver {
	return &dualObserver{log: d.logger, stderr: d.stderr, execute: execute, m: newDualMetrics(),
		phase: map[string]migrate.Phase{}, lag: map[string]int64{}}
}

// maxLogged bounds the partitions named in one log line; the rest are counted.
const maxLogged = 20

func (o *dualObserver) GroupSynced(s migrate.GroupStatus) {
	o.m.group(s)
	o.mu.Lock()
	o.phase[s.Group], o.lag[s.Group] = s.Phase, s.Lag
	o.written += s.Written()
	o.lastErr, o.lastSync = nil, time.Now()
	o.mu.Unlock()
	if s.Phase != s.Previous {
		o.log.Info("group phase", "group", s.Group, "phase", s.Phase, "was", s.Previous,
			"legacy_consumers", s.LegacyAlive, "kafka_state", s.KafkaState, "kafka_members", s.Members)
	}
	var done, refused, failed []string
	for _, w := range s.Writes {
		desc := fmt.Sprintf("%s %s->%d", w.TopicPartition, from(w.From), w.To)
		switch {
		case w.Err != nil:
			o.countError()
			failed = append(failed, fmt.Sprintf("%s %s: %v", w.Direction, desc, w.Err))
		case w.Refused:
			refused = append(refused, desc)
		default:
			done = append(done, string(w.Direction)+" "+w.Reason+" "+desc)
		}
	}
	if len(failed) > 0 {
		// One line per group, each partition named (up to a bound): per-partition errors stay
		// visible without one line each for thousands of partitions.
		o.log.Warn("writes failed, retrying later", "group", s.Group, "partitions", len(failed), "errors", limit(failed, maxLogged))
	}
	if len(refused) > 0 {
		o.log.Info("kafka refused the admin commit: the group is active, so Kafka is primary now", "group", s.Group,
			"partitions", len(refused), "phase", s.Phase)
	}
	if len(done) == 0 {
		return
	}
	msg := "mirrored"
	if !o.execute {
		msg = "would mirror (dry run)"
	}
	o.log.Info(msg, "group", s.Group, "phase", s.Phase, "partitions", len(done), "writes", limit(done, maxLogged))
}

func from(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func (o *dualObserver) countError() {
	o.mu.Lock()
	o.errors++
	o.mu.Unlock()
}

func (o *dualObserver) SyncFailed(groups []string, err error) {
	o.m.syncFailures.Inc()
	o.mu.Lock()
	o.errors++
	o.lastErr = err
	o.mu.Unlock()
	o.log.Warn("sync failed, retrying at the next poll", "groups", len(groups), "err", err)
}

// health is /healthz: unhealthy while the latest store access failed as a whole.
func (o *dualObserver) health() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastErr
}

// status is the one-line summary.
func (o *dualObserver) status() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := map[migrate.Phase]int{}
	var lag int64
	for g, p := range o.phase {
		n[p]++
		lag += o.lag[g]
	}
	return fmt.Sprintf("dual-commit: %d groups (%d zk-primary, %d switching, %d kafka-primary), lag %d, %d written, %d errors",
		len(o.phase), n[migrate.PhaseZKPrimary], n[migrate.PhaseSwitching], n[migrate.PhaseKafkaPrimary], lag, o.written, o.errors)
}

// statusLine prints the status every interval when stderr is a terminal; it returns its stop.
func (o *dualObserver) statusLine(ctx context.Context, every time.Duration) func() {
	f, ok := o.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintln(f, o.status()) //nolint:errcheck // a status line that cannot print is not worth stopping for
			}
		}
	}()
	return func() { cancel(); <-done }
}

// dualMetrics are the Prometheus series of dual-commit, on a registry of their own.
type dualMetrics struct {
	reg          *prometheus.Registry
	phase        *prometheus.GaugeVec
	lag, lead    *prometheus.GaugeVec
	missing      *prometheus.GaugeVec
	writes       *prometheus.CounterVec
	refused      *prometheus.CounterVec
	errs         *prometheus.CounterVec
	syncFailures prometheus.Counter
}

func newDualMetrics() *dualMetrics {
	m := &dualMetrics{
		reg: prometheus.NewRegistry(),
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_phase",
			Help: "1 for the group's current phase, 0 for the others"}, []string{"group", "phase"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_lag_offsets",
			Help: "sum over partitions of how far Kafka trails ZooKeeper"}, []string{"group"}),
		lead: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_kafka_lead_offsets",
			Help: "sum over partitions of how far Kafka is ahead of ZooKeeper"}, []string{"group"}),
		missing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_missing_partitions",
			Help: "ZooKeeper offsets Kafka has no commit for"}, []string{"group"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_writes_total",
			Help: "partitions written (or, in a dry run, that would be)"}, []string{"group", "direction", "reason"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_refused_total",
			Help: "partitions whose admin commit Kafka refused because the group is active"}, []string{"group"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_errors_total",
			Help: "partitions whose write failed"}, []string{"group"}),
		syncFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_sync_failures_total",
			Help: "reads or writes of whole batches of groups that failed (retried)"}),
	}
	m.reg.MustRegister(m.phase, m.lag, m.lead, m.missing, m.writes, m.refused, m.errs, m.syncFailures)
	return m
}

func (m *dualMetrics) group(s migrate.GroupStatus) {
	for _, p := range migrate.Phases() {
		v := 0.0
		if p == s.Phase {
			v = 1
		}
		m.phase.WithLabelValues(s.Group, string(p)).Set(v)
	}
	m.lag.WithLabelValues(s.Group).Set(float64(s.Lag))
	m.lead.WithLabelValues(s.Group).Set(float64(s.Lead))
	m.missing.WithLabelValues(s.Group).Set(float64(s.Missing))
	for _, w := range s.Writes {
		switch {
		case w.Err != nil:
			m.errs.WithLabelValues(s.Group).Inc()
		case w.Refused:
			m.refused.WithLabelValues(s.Group).Inc()
		default:
			m.writes.WithLabelValues(s.Group, string(w.Direction), w.Reason).Inc()
		}
	}
}
