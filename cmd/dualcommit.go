package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

type dualCommitOptions struct {
	selection         selectionOptions // plan's selection and policy flags: one decision for every write
	reverse           bool
	resyncInterval    time.Duration
	keepaliveInterval time.Duration
	pollInterval      time.Duration
	statusInterval    time.Duration
	maxPerSecond      float64
	metricsAddr       string
	waitForLease      bool
	writeMode         // --execute, --dry-run

	filter migrate.Filter
	policy migrate.Policy
	target targetOptions
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

Every write into Kafka is the one "migrate plan" would make for the partition under the same
--on-conflict, --out-of-range and --offset-adjust (the group gates aside: mirroring while legacy
consumers run is the point). What plan blocks (above-log-end, below-log-start, topic-missing,
partition-missing, invalid-znode, and any difference under --on-conflict=fail, zk-ahead too) is
not written: it is logged and counted per class. --on-conflict=kafka writes only partitions
Kafka has no commit for. --on-conflict=zk is refused (it moves Kafka backwards), and so is
--offset-adjust with --reverse (the reverse mirror writes Kafka's offsets unadjusted).

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
once at start; a broker before Kafka 0.11 cannot report its retention, and then the flag is
required), except an offset outside its partition's log (the consumer resets from it just
as from an expired one; verify reports it as kafka-out-of-range). A full re-read runs every
--resync-interval as a safety net behind the watches; the Kafka groups are polled every
--poll-interval for phase changes and for --reverse. Memory: about 300 MB at a million watched
offsets; the garbage collector runs with GOGC=50 unless GOGC is set in the environment.

One writer at a time: with --execute, an instance takes a lease (an ephemeral znode under
<chroot>/zk2kafka/dual-commit on its watcher's ZooKeeper session) and writes only while it holds
it. A second instance on overlapping groups (any --group-regex overlaps everything; explicit
--group lists with no common name do not) stands by until the holder ends, or exits 1 at once
with --wait-for-lease=false. The holder stops writing before its session could expire.

With --group-map old=new (see zk2kafka migrate --help) legacy group old is mirrored into Kafka
group new, its phase decided from old's liveness and new's state; --reverse writes new's offsets
into old's znodes. A map that lands two selected legacy groups in one Kafka group is refused.

With --target-kafka (a cluster MirrorMaker 2 replicates --kafka into; the flags of migrate plan)
it mirrors into the target, each ZooKeeper offset translated into the target's log through
MirrorMaker 2's offset syncs, read again every --mm2-offset-syncs-interval; an offset no sync
places yet is not mirrored (logged with its class) until a later read of its group. --reverse
is refused with it.

With --metrics-addr it serves Prometheus /metrics, /healthz (liveness: the loop made progress
recently; a failing store does not fail it) and /readyz (readiness: the first sync of every group
done, every watch set, the lease held; a standby is alive but not ready). A Kafka outage does not
make it unready: the lag (ZooKeeper's newest offset minus Kafka's last acknowledged commit) keeps
following ZooKeeper, and the writes left pending are counted as errors with their reason.

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
			if err := o.target.validate(c.Flags(), os.Getenv); err != nil {
				return err
			}
			if o.target.enabled() && o.reverse {
				return errors.New("--reverse with --target-kafka: the target's offsets count another cluster's records, " +
					"and ZooKeeper's are the source's; nothing translates them back")
			}
			return runDualCommit(c.Context(), d, g, o)
		},
	}
	o.selection.addFlags(c)
	f := c.Flags()
	f.Lookup("on-conflict").Usage = "where Kafka and ZooKeeper differ: max (never backwards), kafka (write only where Kafka has no commit), or fail (block any difference); zk is refused"
	o.writeMode.addFlags(c, "really write (without it, a dry run that logs what it would mirror)")
	f.BoolVar(&o.reverse, "reverse", false, "for kafka-primary groups, mirror Kafka into ZooKeeper (forward only)")
	f.DurationVar(&o.resyncInterval, "resync-interval", 5*time.Minute, "full re-read of both stores, behind the watches")
	f.DurationVar(&o.keepaliveInterval, "keepalive-interval", 0, "re-commit unchanged offsets this often (0: half the broker's offsets.retention.minutes)")
	f.DurationVar(&o.pollInterval, "poll-interval", 2*time.Second, "how often the Kafka group states are polled for phase changes (with the commits of groups Kafka consumers own or share, and of every group with --reverse)")
	f.DurationVar(&o.statusInterval, "status-interval", 10*time.Second, "one status line this often, on a terminal only")
	f.Float64Var(&o.maxPerSecond, "max-commits-per-second", 0, "at most this many partitions written per second (0: no limit; otherwise at least 0.001)")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics, /healthz and /readyz on this address, e.g. :9464")
	f.BoolVar(&o.waitForLease, "wait-for-lease", true, "with --execute, when another instance holds the lease on overlapping groups, stand by until it ends (false: exit 1 at once, naming it)")
	o.target.addFlags(c)
	f.DurationVar(&o.target.follow, "mm2-offset-syncs-interval", 30*time.Second, "with --target-kafka: read MirrorMaker 2's offset syncs again this often "+
		"(an offset past the syncs read is replication-behind until then, and mirrored at the group's next read)")
	return c
}

func (o *dualCommitOptions) validate() error {
	if err := o.writeMode.check(); err != nil {
		return err
	}
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
	if o.policy, err = o.selection.policy(); err != nil {
		return err
	}
	if err := mirror.CheckPolicy(o.policy, o.reverse); err != nil {
		return err
	}
	o.filter, err = o.selection.filter()
	return err
}

// dualCommitGCPercent is the garbage collector's target for dual-commit unless GOGC is set: a
// process that runs for weeks with a live set of two offsets per watched partition is better
// sized by its live set than by Go's default, which lets the heap grow to twice it (at a
// million offsets the first sync's peak, docs/benchmarks.md), for a little more GC work.
const dualCommitGCPercent = 50

func runDualCommit(ctx context.Context, d *deps, g *globalOptions, o *dualCommitOptions) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(dualCommitGCPercent))
	}
	mg, err := openMigration(ctx, d, g, &o.target)
	if err != nil {
		return err
	}
	defer mg.close()
	src, kafka := mg.src, mg.kafka
	if src.Unchanging != "" {
		return errors.New(src.Unchanging)
	}
	m := &mirror.Mirror{
		Legacy: src.Store, Kafka: kafka, Committer: kafka, Filter: o.filter, Translator: mg.tr, Policy: o.policy,
		Execute: o.execute, Reverse: o.reverse,
		ResyncInterval: o.resyncInterval, KeepaliveInterval: o.keepaliveInterval, PollInterval: o.pollInterval,
		KafkaUnreachable: kafkawriter.Unreachable,
		Metadata: func(_ string, mtime time.Time) string {
			return migrate.Provenance{Version: d.build.Version, Mtime: mtime, Adjust: o.policy.OffsetAdjust}.String()
		},
	}
	if o.reverse {
		if m.LegacyWriter, err = src.LegacyWriter(); err != nil {
			return err
		}
	}
	var expiries func() int64
	var lease migrate.LegacyLease // single writer: nil without --execute or without a ZooKeeper watcher
	if src.Watch != nil {
		w, err := src.Watch(ctx)
		if err != nil {
			return err
		}
		defer w.Close()
		m.Watcher = w
		expiries = w.Expiries
		if o.execute {
			if lease, err = openDualLease(ctx, o, w); err != nil {
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
		m.Limiter = mirror.NewLimiter(o.maxPerSecond, nil)
	}
	obs := newDualObserver(d, o.execute, o.selection.filterOptions.describe()+" "+src.Where, livenessWindow(o.pollInterval), expiries)
	// Where else groups are (a chroot one level off), asked once, the first time the selection
	// is empty: a warning for people, on the loop's goroutine, cheap (a listing and a few Exists).
	obs.nearby = sync.OnceValue(func() string {
		_, nearby := migrate.LocateGroups(ctx, src.Store)
		return migrate.NearbyHint(nearby)
	})
	m.Observer = obs
	if lease != nil { // a dry run, or a store without a watcher, has none
		obs.lease = lease.State
	}
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
	d.logger.Info("dual-commit started", "reverse", o.reverse, "resync", o.resyncInterval, "poll", o.pollInterval,
		"on_conflict", o.policy.OnConflict, "out_of_range", o.policy.OutOfRange, "offset_adjust", o.policy.OffsetAdjust)
	if err := m.Run(ctx); err != nil {
		if errors.Is(err, migrate.ErrGroupNotFound) {
			return fmt.Errorf("dual-commit: %w", err)
		}
		return err
	}
	d.logger.Info("dual-commit stopped: pending changes flushed")
	return nil
}

// livenessWindow is how long the loop may go without progress before /healthz fails: long
// enough for a slow batch (a rate-limit wait, Kafka retries), short enough to catch a loop that
// is stuck.
func livenessWindow(poll time.Duration) time.Duration { return max(2*time.Minute, 30*poll) }

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
