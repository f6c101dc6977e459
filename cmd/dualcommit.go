package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
)

type dualCommitOptions struct {
	selection         filterOptions
	execute           bool
	reverse           bool
	resyncInterval    time.Duration
	keepaliveInterval time.Duration
	pollInterval      time.Duration
	statusInterval    time.Duration
	maxPerSecond      float64
	metricsAddr       string
	waitForLease      bool

	filter migrate.Filter
}

func newDualCommitCmd(d *deps, g *globalOptions) *cobra.Command {
	o := &dualCommitOptions{}
	c := &cobra.Command{
		Use:   "dual-commit",
		Short: "Keep Kafka in step with ZooKeeper while consumers are rolled over",
		Long: `Dual-commit runs until stopped (SIGINT/SIGTERM: it flushes what is pending, then exits 0).
It watches the selected groups' ZooKeeper offsets and liveness registrations and mirrors every
change into Kafka as admin commits, so consumers can be moved to Kafka offset storage one at a
time. Neither store is ever moved backwards: Kafka is read again just before each commit and
only offsets where ZooKeeper leads are written.

Each group is in one phase, logged and exported as a metric:
  zk-primary     legacy consumers own the group: ZooKeeper is mirrored into Kafka
  switching      legacy consumers are still registered while the Kafka group has members or
                 is ahead: both stores advance, ZooKeeper is mirrored where it leads
  kafka-primary  no legacy consumer is left and the Kafka group has members or is ahead
                 (a commit Kafka refuses because the group is active means the same): Kafka is
                 no longer written; with --reverse, Kafka is mirrored into ZooKeeper where it
                 leads, so rolling back to ZooKeeper storage resumes where Kafka consumers were

Offsets of an empty Kafka group expire offsets.retention.minutes after their commit: unchanged
offsets are re-committed every --keepalive-interval (default: half the broker's retention, and
once at start). A full re-read runs every --resync-interval as a safety net behind the watches;
the Kafka groups are polled every --poll-interval for phase changes and for --reverse.

One writer at a time: with --execute, an instance takes a lease (an ephemeral znode under
<chroot>/zk2kafka/dual-commit on its watcher's ZooKeeper session) and writes only while it holds
it. A second instance on overlapping groups (any --group-regex overlaps everything; explicit
--group lists with no common name do not) stands by until the holder ends, or exits 1 at once
with --wait-for-lease=false. The holder stops writing before its session could expire.

SIGHUP starts a full resync at once (flags are not reloaded). Without --execute nothing is
written: the log shows what would be mirrored.`,
		Example: `  # see what it would mirror, write nothing
  zk2kafka migrate dual-commit --group-regex '^billing-'

  # mirror for real, metrics and /healthz on :9464, at most 2000 partitions written per second
  zk2kafka migrate dual-commit --group-regex '^billing-' --execute --metrics-addr :9464 --max-commits-per-second 2000

  # once consumers run on Kafka: keep ZooKeeper in step too, for a safe rollback
  zk2kafka migrate dual-commit --group orders --execute --reverse`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runDualCommit(c.Context(), d, g, o)
		},
	}
	o.selection.addFlags(c)
	f := c.Flags()
	f.BoolVar(&o.execute, "execute", false, "really write (without it, a dry run that logs what it would mirror)")
	f.BoolVar(&o.reverse, "reverse", false, "for kafka-primary groups, mirror Kafka into ZooKeeper (forward only)")
	f.DurationVar(&o.resyncInterval, "resync-interval", 5*time.Minute, "full re-read of both stores, behind the watches")
	f.DurationVar(&o.keepaliveInterval, "keepalive-interval", 0, "re-commit unchanged offsets this often (0: half the broker's offsets.retention.minutes)")
	f.DurationVar(&o.pollInterval, "poll-interval", 2*time.Second, "how often the Kafka groups are polled for phase changes and --reverse")
	f.DurationVar(&o.statusInterval, "status-interval", 10*time.Second, "one status line this often, on a terminal only")
	f.Float64Var(&o.maxPerSecond, "max-commits-per-second", 0, "at most this many partitions written per second (0: no limit; otherwise at least 0.001)")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this address, e.g. :9464")
	f.BoolVar(&o.waitForLease, "wait-for-lease", true, "with --execute, when another instance holds the lease on overlapping groups, stand by until it ends (false: exit 1 at once, naming it)")
	return c
}

func (o *dualCommitOptions) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{
		{"--resync-interval", o.resyncInterval, time.Second},
		{"--poll-interval", o.pollInterval, 10 * time.Millisecond},
		{"--status-interval", o.statusInterval, time.Second},
	} {
		if d.v < d.min {
			return fmt.Errorf("%s: %s is too short, expected at least %s", d.name, d.v, d.min)
		}
	}
	if o.keepaliveInterval < 0 || (o.keepaliveInterval > 0 && o.keepaliveInterval < time.Second) {
		return fmt.Errorf("--keepalive-interval: %s is out of range, expected 0 (from the broker) or at least 1s", o.keepaliveInterval)
	}
	if o.maxPerSecond < 0 {
		return fmt.Errorf("--max-commits-per-second: %g must not be negative", o.maxPerSecond)
	}
	// Below a thousandth the limiter's booking of one group's partitions (n / rate seconds)
	// no longer fits a time.Duration for large groups; NaN and +Inf would disable the limit.
	if math.IsNaN(o.maxPerSecond) || math.IsInf(o.maxPerSecond, 0) || (o.maxPerSecond > 0 && o.maxPerSecond < 0.001) {
		return fmt.Errorf("--max-commits-per-second: %g is out of range, expected 0 (no limit) or from 0.001 up", o.maxPerSecond)
	}
	if o.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(o.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %q is not host:port: %w", o.metricsAddr, err)
		}
	}
	var err error
	o.filter, err = o.selection.filter()
	return err
}

// watcherOpener is implemented by store openers that can watch ZooKeeper (the real one);
// without it dual-commit relies on the resync and the poll alone.
type watcherOpener interface {
	OpenWatcher(ctx context.Context, g *globalOptions, d *deps) (migrate.LegacyWatcher, func(), error)
}

func runDualCommit(ctx context.Context, d *deps, g *globalOptions, o *dualCommitOptions) error {
	legacy, kafka, closeStores, err := openStores(ctx, d, g)
	if err != nil {
		return err
	}
	defer closeStores()
	m := &migrate.Mirror{
		Legacy: legacy, Kafka: kafka, Committer: kafka, Filter: o.filter,
		Execute: o.execute, Reverse: o.reverse,
		ResyncInterval: o.resyncInterval, KeepaliveInterval: o.keepaliveInterval, PollInterval: o.pollInterval,
		Metadata: func(_ string, mtime time.Time) string { return kafkawriter.ProvenanceMetadata(Version, mtime) },
	}
	if o.reverse {
		if m.LegacyWriter, err = asLegacyWriter(legacy); err != nil {
			return err
		}
	}
	var lease dualLease // single writer: nil without --execute or without a ZooKeeper watcher
	if wo, ok := d.stores.(watcherOpener); ok {
		w, closeWatcher, err := wo.OpenWatcher(ctx, g, d)
		if err != nil {
			return err
		}
		defer closeWatcher()
		m.Watcher = w
		if o.execute {
			if lease, err = openDualLease(ctx, d, o, w); err != nil {
				return err
			}
			if lease != nil {
				defer lease.Close() // before the watcher's session ends: deferred after it
				m.Lease = lease
			}
		}
	}
	// SIGHUP: an immediate full resync (groups selected again, both stores re-read). The flags
	// are not reloaded.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	resync := make(chan struct{})
	go forwardHUP(ctx, d, hup, resync)
	m.Resync = resync
	if o.maxPerSecond > 0 {
		m.Limiter = migrate.NewLimiter(o.maxPerSecond, nil)
	}
	obs := newDualObserver(d, o.execute)
	m.Observer = obs
	// TODO(merge): obs.lease = lease.State
	// (when lease != nil: a dry run, or a store without a watcher, has no lease)
	if o.metricsAddr != "" {
		stop, err := serveMetrics(ctx, d, o.metricsAddr, obs)
		if err != nil {
			return err
		}
		defer stop()
	}
	stopStatus := obs.statusLine(ctx, o.statusInterval)
	defer stopStatus()
	if !o.execute {
		d.logger.Warn("dry run: nothing is written; pass --execute to mirror")
	}
	d.logger.Info("dual-commit started", "reverse", o.reverse, "resync", o.resyncInterval, "poll", o.pollInterval)
	if err := m.Run(ctx); err != nil {
		if errors.Is(err, migrate.ErrGroupNotFound) {
			return fmt.Errorf("dual-commit: %w", err)
		}
		return err
	}
	d.logger.Info("dual-commit stopped: pending changes flushed")
	return nil
}

// forwardHUP turns each SIGHUP into a resync request until ctx ends.
func forwardHUP(ctx context.Context, d *deps, hup <-chan os.Signal, resync chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			d.logger.Info("SIGHUP: resyncing every group now")
			select {
			case resync <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}
}
