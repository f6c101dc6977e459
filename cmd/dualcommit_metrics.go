package cmd

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// dualMetrics are the Prometheus series of dual-commit, on a registry of their own.
type dualMetrics struct {
	reg              *prometheus.Registry
	groups           prometheus.Gauge
	phase            *prometheus.GaugeVec
	lag, lead        *prometheus.GaugeVec
	missing          *prometheus.GaugeVec
	blocked          *prometheus.GaugeVec
	blockedSeen      map[string]map[migrate.Class]bool // the classes each group has a series for
	writes           *prometheus.CounterVec
	refused          *prometheus.CounterVec
	errs             *prometheus.CounterVec
	rewinds          *prometheus.CounterVec
	syncFailures     prometheus.Counter
	latency          prometheus.Histogram
	lastResync, beat prometheus.Gauge
	perGroup         []*prometheus.MetricVec // every series labelled by group, dropped when it leaves
	started          time.Time
}

// dualHooks are the readings the metrics take from outside the mirror at scrape time.
type dualHooks struct {
	expiries func() int64 // ZooKeeper session expiries of the watcher; nil: none
	ready    func() bool
	lease    func() (held bool, holder string) // nil: no lease (a dry run takes none)
}

func newDualMetrics(b build, h dualHooks) *dualMetrics {
	m := &dualMetrics{
		reg: prometheus.NewRegistry(),
		groups: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_groups",
			Help: "groups the selection matches now"}),
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_phase",
			Help: "the group's phase: 1 for the current one, 0 for the others"}, []string{"group", "phase"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_lag_offsets",
			Help: "sum over partitions of ZooKeeper's newest offset minus Kafka's last acknowledged commit, at every ZooKeeper change " +
				"(also while Kafka cannot be written)"}, []string{"group"}),
		lead: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_kafka_lead_offsets",
			Help: "sum over partitions of how far Kafka is ahead of ZooKeeper"}, []string{"group"}),
		missing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_missing_partitions",
			Help: "ZooKeeper offsets Kafka has no commit for"}, []string{"group"}),
		blocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_blocked_partitions",
			Help: "partitions the latest sync did not mirror because migrate plan would block them, by plan class"},
			[]string{"group", "class"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_writes_total",
			Help: "partitions written, or with dry_run=\"true\" that a dry run would have written"},
			[]string{"group", "direction", "reason", "dry_run"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_refused_total",
			Help: "partitions whose admin commit Kafka refused because the group is active"}, []string{"group"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_errors_total",
			Help: "partitions whose write failed, or was left pending because the target store could not be read, by reason " +
				"(unreachable, coordinator-unavailable, timeout, retriable, partition-missing, unauthorized, rejected, stopped, other)"},
			[]string{"group", "direction", "reason"}),
		rewinds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_legacy_rewinds_total",
			Help: "ZooKeeper offsets found lower than the mirror's previous read of them (flagged, not mirrored backwards)"},
			[]string{"group"}),
		syncFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_sync_failures_total",
			Help: "reads or writes of whole batches of groups that failed (retried)"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zk2kafka_dual_commit_mirror_latency_seconds",
			Help:    "from a ZooKeeper offset znode's modification to Kafka's acknowledgement of its mirror",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}),
		lastResync: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_last_resync_timestamp_seconds",
			Help: "when the latest full resync completed without a failed read (unix time; 0 before the first)"}),
		beat: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_heartbeat_timestamp_seconds",
			Help: "when the mirror's loop last made progress (unix time)"}),
		started:     time.Now(),
		blockedSeen: map[string]map[migrate.Class]bool{},
	}
	m.perGroup = []*prometheus.MetricVec{m.phase.MetricVec, m.lag.MetricVec, m.lead.MetricVec, m.missing.MetricVec,
		m.blocked.MetricVec, m.writes.MetricVec, m.refused.MetricVec, m.errs.MetricVec, m.rewinds.MetricVec}
	m.beat.SetToCurrentTime()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zk2kafka_build_info",
		Help: "the build's version, VCS revision and Go version, as labels (the value is always 1)"}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(b.Version, b.Commit, b.GoVersion).Set(1)
	expiries := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "zk2kafka_dual_commit_zk_session_expiries_total",
		Help: "times the watcher's ZooKeeper session expired (every watch lost and set again)"}, func() float64 {
		if h.expiries == nil {
			return 0
		}
		return float64(h.expiries())
	})
	leaseHeld := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_lease_held",
		Help: "whether this instance holds the single-writer lease: 1 or 0 (a standby, or a dry run, holds none)"}, func() float64 {
		if h.lease == nil {
			return 0
		}
		return b2f(first(h.lease()))
	})
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zk2kafka_dual_commit_ready",
		Help: "whether /readyz says ready (first sync done, watches armed, lease held): 1 or 0"}, func() float64 {
		return b2f(h.ready != nil && h.ready())
	})
	m.reg.MustRegister(m.groups, m.phase, m.lag, m.lead, m.missing, m.blocked, m.writes, m.refused, m.errs, m.rewinds, m.syncFailures,
		m.latency, m.lastResync, m.beat, build, expiries, leaseHeld, ready,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func first(held bool, _ string) bool { return held }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *dualMetrics) group(s mirror.GroupStatus, started time.Time) {
	for _, p := range mirror.Phases() {
		m.phase.WithLabelValues(s.Group, string(p)).Set(b2f(p == s.Phase))
	}
	m.lag.WithLabelValues(s.Group).Set(float64(s.Lag))
	m.lead.WithLabelValues(s.Group).Set(float64(s.Lead))
	m.missing.WithLabelValues(s.Group).Set(float64(s.Missing))
	// Each sync says what it blocks now: a class no longer blocked goes to 0 (its series kept,
	// so an alert on it resolves rather than going stale).
	seen := m.blockedSeen[s.Group]
	if seen == nil && len(s.Blocked) > 0 {
		seen = map[migrate.Class]bool{}
		m.blockedSeen[s.Group] = seen
	}
	for c, n := range s.Blocked {
		seen[c] = true
		m.blocked.WithLabelValues(s.Group, string(c)).Set(float64(n))
	}
	for c := range seen {
		if _, now := s.Blocked[c]; !now {
			m.blocked.WithLabelValues(s.Group, string(c)).Set(0)
		}
	}
	if len(s.Rewinds) > 0 {
		m.rewinds.WithLabelValues(s.Group).Add(float64(len(s.Rewinds)))
	}
	dry := "false"
	if s.DryRun {
		dry = "true"
	}
	for _, w := range s.Writes {
		switch {
		case w.Err != nil:
			// The reason is one of a fixed set (kafkawriter.FailureReasons): the series stay bounded.
			m.errs.WithLabelValues(s.Group, string(w.Direction), kafkawriter.FailureReason(w.Err)).Inc()
		case w.Refused:
			m.refused.WithLabelValues(s.Group).Inc()
		default:
			m.writes.WithLabelValues(s.Group, string(w.Direction), w.Reason, dry).Inc()
			// Only changes made while the mirror ran: an offset written at start from a znode
			// set days ago says nothing of the mirror's latency.
			if !w.Acked.IsZero() && !w.Mtime.IsZero() && !w.Mtime.Before(started) {
				m.latency.Observe(max(0, w.Acked.Sub(w.Mtime).Seconds()))
			}
		}
	}
}

// selection sets the groups gauge and drops every series of the groups that left.
func (m *dualMetrics) selection(sel mirror.Selection) {
	m.groups.Set(float64(len(sel.Groups)))
	for _, g := range sel.Removed {
		delete(m.blockedSeen, g)
		for _, v := range m.perGroup {
			v.DeletePartialMatch(prometheus.Labels{"group": g})
		}
	}
}

func (m *dualMetrics) loop(s mirror.LoopState) {
	m.beat.Set(float64(s.Beat.UnixNano()) / 1e9)
	if !s.LastResync.IsZero() {
		m.lastResync.Set(float64(s.LastResync.UnixNano()) / 1e9)
	}
}
