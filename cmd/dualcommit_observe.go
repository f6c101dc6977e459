package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// dualObserver turns what the mirror reports into logs, metrics, the status line and the
// health endpoints.
type dualObserver struct {
	log     *slog.Logger
	stderr  any
	execute bool
	// where names the selection and the store for the "waiting for a group" warning.
	where string
	// nearby, when set, says where else groups are (a chroot one level off) for that warning.
	nearby func() string
	m      *dualMetrics
	// lease, when set, is the single-writer lease's state; nil: no lease is taken (dry run).
	lease func() (held bool, holder string)
	// livenessWindow: /healthz fails when the loop made no progress for longer.
	livenessWindow time.Duration

	mu      sync.Mutex
	phase   map[string]mirror.Phase
	lag     map[string]int64
	groups  int
	written int
	errors  int
	state   mirror.LoopState
}

func newDualObserver(d *deps, execute bool, where string, livenessWindow time.Duration, expiries func() int64) *dualObserver {
	o := &dualObserver{log: d.logger, stderr: d.stderr, execute: execute, where: where, livenessWindow: livenessWindow,
		phase: map[string]mirror.Phase{}, lag: map[string]int64{}}
	o.m = newDualMetrics(d.build, dualHooks{expiries: expiries, ready: func() bool { return o.readiness() == nil },
		lease: func() (bool, string) {
			if o.lease == nil {
				return false, ""
			}
			return o.lease()
		}})
	o.state.Beat = time.Now() // the loop starts now: liveness counts from here
	return o
}

// maxLogged bounds the partitions named in one log line; the rest are counted.
const maxLogged = 20

func (o *dualObserver) GroupSynced(s mirror.GroupStatus) {
	o.m.group(s, o.m.started)
	o.mu.Lock()
	o.phase[s.Group], o.lag[s.Group] = s.Phase, s.Lag
	o.written += s.Written()
	o.mu.Unlock()
	if s.Phase != s.Previous {
		o.log.Info("group phase", "group", s.Group, "kafka_group", kafkaGroupOf(s), "phase", s.Phase, "was", s.Previous,
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
	if len(failed) > 0 && s.KafkaErr == nil { // an unreadable Kafka is logged once per batch (SyncFailed)
		// One line per group, each partition named (up to a bound): per-partition errors stay
		// visible without one line each for thousands of partitions.
		o.log.Warn("writes failed, retrying later", "group", s.Group, "kafka_group", kafkaGroupOf(s), "partitions", len(failed), "errors", limit(failed, maxLogged))
	}
	if len(s.Rewinds) > 0 {
		back := make([]string, len(s.Rewinds))
		for i, r := range s.Rewinds {
			back[i] = fmt.Sprintf("%s %d -> %d", r.TopicPartition, r.From, r.To)
		}
		// Flagged, not blocked: a deliberate reset looks the same as a client that rewound by
		// mistake (kafka-node 2.6.1 does against Kafka 3.x); Kafka is not moved back with it.
		o.log.Warn("ZooKeeper offsets went backwards since the previous read: check the legacy client", "group", s.Group,
			"partitions", len(back), "offsets", limit(back, maxLogged))
	}
	if n := blockedCount(s.Blocked); n > 0 || len(s.BlockedReasons) > 0 {
		// Once per sync of the group: what plan would block is never written, and says why.
		o.log.Warn("not mirrored: migrate plan would block these partitions", "group", s.Group, "kafka_group", kafkaGroupOf(s), "partitions", n,
			"classes", s.Blocked, "why", s.BlockedReasons)
	}
	if len(refused) > 0 {
		o.log.Info("kafka refused the admin commit: the group is active, so Kafka is primary now", "group", s.Group, "kafka_group", kafkaGroupOf(s),
			"partitions", len(refused), "phase", s.Phase)
	}
	if len(done) == 0 {
		return
	}
	msg := "mirrored"
	if !o.execute {
		msg = "would mirror (dry run)"
	}
	o.log.Info(msg, "group", s.Group, "kafka_group", kafkaGroupOf(s), "phase", s.Phase, "partitions", len(done), "writes", limit(done, maxLogged))
}

func blockedCount(b map[migrate.Class]int) int {
	n := 0
	for _, c := range b {
		n += c
	}
	return n
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

// LegacyLag sets the group's lag gauge while Kafka is slow to answer its read (an outage's first
// read takes the whole retry budget to fail): the sync's own report follows.
func (o *dualObserver) LegacyLag(group string, lag int64) {
	o.m.lag.WithLabelValues(group).Set(float64(lag))
	o.mu.Lock()
	o.lag[group] = lag
	o.mu.Unlock()
}

func (o *dualObserver) SyncFailed(groups []string, err error) {
	o.m.syncFailures.Inc()
	o.mu.Lock()
	o.errors++
	o.mu.Unlock()
	o.log.Warn("sync failed, retrying at the next poll", "groups", len(groups), "err", err)
}

// SelectionChanged logs the selection (names at debug) and warns while it matches nothing.
func (o *dualObserver) SelectionChanged(sel mirror.Selection) {
	o.m.selection(sel)
	o.mu.Lock()
	o.groups = len(sel.Groups)
	for _, g := range sel.Removed {
		delete(o.phase, g)
		delete(o.lag, g)
	}
	o.mu.Unlock()
	if len(sel.Missing) > 0 {
		o.log.Warn("groups named by --group are not in ZooKeeper yet: waiting for them", "groups", limit(sel.Missing, maxLogged),
			"under", o.where)
	}
	if len(sel.Groups) == 0 {
		args := []any{"under", o.where, "groups_there", sel.Listed}
		if o.nearby != nil {
			if hint := o.nearby(); hint != "" {
				args = append(args, "hint", hint)
			}
		}
		o.log.Warn("waiting for a group matching the selection", args...)
		return
	}
	o.log.Info("selection", "groups", len(sel.Groups), "added", len(sel.Added), "removed", len(sel.Removed))
	if len(sel.Added) > 0 {
		o.log.Debug("groups added to the selection", "groups", sel.Added)
	}
	if len(sel.Removed) > 0 {
		o.log.Debug("groups left the selection (deleted from ZooKeeper)", "groups", sel.Removed)
	}
}

// LoopState records the loop's heartbeat for /healthz, /readyz and the metrics.
func (o *dualObserver) LoopState(s mirror.LoopState) {
	o.m.loop(s)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.state = s
}

// liveness is /healthz: the loop made progress recently. A store that fails does not make it
// fail (a restart would not mend the store); a loop stuck for longer than the window does.
func (o *dualObserver) liveness() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if since := time.Since(o.state.Beat); since > o.livenessWindow {
		return fmt.Errorf("the mirror loop made no progress for %s (more than %s)", humanDuration(since.Round(time.Second)), humanDuration(o.livenessWindow))
	}
	return nil
}

// readiness is /readyz (mirror.Readiness).
func (o *dualObserver) readiness() error {
	o.mu.Lock()
	st := o.state
	o.mu.Unlock()
	return mirror.Readiness(st, o.lease)
}

// status is the one-line summary.
func (o *dualObserver) status() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := map[mirror.Phase]int{}
	var lag int64
	for g, p := range o.phase {
		n[p]++
		lag += o.lag[g]
	}
	return fmt.Sprintf("dual-commit: %d groups (%d zk-primary, %d switching, %d kafka-primary), lag %d, %d written, %d errors",
		o.groups, n[mirror.PhaseZKPrimary], n[mirror.PhaseSwitching], n[mirror.PhaseKafkaPrimary], lag, o.written, o.errors)
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

// kafkaGroupOf is the Kafka group a status is of: its own name unless a group map renames it.
func kafkaGroupOf(s mirror.GroupStatus) string {
	if s.KafkaGroup != "" {
		return s.KafkaGroup
	}
	return s.Group
}
