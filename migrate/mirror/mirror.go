package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Phase is where a group stands in its rollover from ZooKeeper to Kafka offset storage.
type Phase string

const (
	// PhaseZKPrimary: legacy consumers own the group (or nobody does yet) and Kafka is not ahead:
	// ZooKeeper offsets are mirrored into Kafka.
	PhaseZKPrimary Phase = "zk-primary"
	// PhaseSwitching: legacy consumers are still registered while the Kafka group has members or
	// is ahead somewhere: both stores advance; ZooKeeper is mirrored forward-only where it leads
	// and Kafka accepts admin commits.
	PhaseSwitching Phase = "switching"
	// PhaseKafkaPrimary: no legacy consumer is left and Kafka has members or leads: Kafka is never
	// written; with Reverse, Kafka is mirrored into ZooKeeper forward-only for a safe rollback.
	PhaseKafkaPrimary Phase = "kafka-primary"
)

// Phases lists every phase, for metrics that export one series per phase.
func Phases() []Phase { return []Phase{PhaseZKPrimary, PhaseSwitching, PhaseKafkaPrimary} }

// RateLimiter bounds how many partitions are committed per second.
type RateLimiter interface {
	// Wait blocks until n more partitions may be written, or ctx ends.
	Wait(ctx context.Context, n int) error
}

// Observer receives what the mirror does; the core never prints. Calls come from the
// mirror's own goroutine, one at a time.
type Observer interface {
	// GroupSynced reports one group's sync: its phase and what was (or would be) written.
	GroupSynced(GroupStatus)
	// SyncFailed reports that reading or writing groups failed as a whole; they are retried.
	SyncFailed(groups []string, err error)
	// SelectionChanged reports the selected groups at start, after each change (groups
	// created, deleted, renamed), and at each full resync while nothing is selected.
	SelectionChanged(Selection)
	// LoopState is the loop's heartbeat: reported after each group synced, each poll tick
	// and each milestone, so a stale one means the loop is stuck.
	LoopState(LoopState)
	// LegacyLag reports a group's lag as of the ZooKeeper read just made, against Kafka's last
	// acknowledged commits, when the sync of its batch still waits for Kafka after a poll
	// interval: the first read or commit after Kafka went away takes the adapter's whole retry
	// budget to fail, and the lag must rise with the legacy commits meanwhile. GroupSynced
	// follows with the sync's own measure. Only groups already seen in Kafka are reported. It
	// is called from a goroutine of its own, never after the batch's GroupSynced.
	LegacyLag(group string, lag int64)
}

// Selection is the set of groups the mirror keeps in step.
type Selection struct {
	Groups         []string // selected now, sorted
	Added, Removed []string // since the previous report
	// Missing are the groups named exactly (--group) that are not under /consumers (yet).
	Missing []string
	// Listed is how many groups are under /consumers, selected or not.
	Listed int
}

// LoopState is what an orchestrator needs to know of a running mirror.
type LoopState struct {
	Beat time.Time // when the loop last made progress
	// Synced: every group of the selection at start has been read from both stores and its
	// writes decided at least once.
	Synced bool
	// Armed: every watch of the current selection is set (always true without a watcher).
	Armed bool
	// LastResync is when the latest full resync (every selected group re-read) completed
	// without a failed read; zero before the first.
	LastResync time.Time
}

// Direction of a mirrored write.
type Direction string

const (
	ToKafka Direction = "zk-to-kafka"
	ToZK    Direction = "kafka-to-zk"
)

// Reasons for a mirrored write.
const (
	ReasonMirror    = "mirror"    // the source store is ahead
	ReasonKeepalive = "keepalive" // unchanged offset re-committed before retention expires it
)

// Write is one partition the mirror wrote, or would write in a dry run.
type Write struct {
	migrate.TopicPartition
	Direction Direction
	Reason    string
	From      *int64 // the target store's offset before; nil when it had none
	To        int64
	// Mtime is the ZooKeeper znode's modification time, for a mirror write into Kafka (zero
	// for a keep-alive); Acked is when Kafka acknowledged it (zero unless written). Between
	// them is the mirror's latency.
	Mtime, Acked time.Time
	// Refused is set when Kafka refused the commit because the group is active: a phase change.
	Refused bool
	Err     error
}

// GroupStatus is one group's state after a sync.
type GroupStatus struct {
	Group string // the legacy group
	// KafkaGroup is the Kafka group Group is mirrored into, when a group map renames it.
	KafkaGroup  string
	Phase       Phase
	Previous    Phase // "" at the first sync
	LegacyAlive bool
	KafkaState  string
	Members     int
	// Lag is how far Kafka trails ZooKeeper (sum over partitions where ZooKeeper leads);
	// Lead is how far Kafka is ahead (sum over partitions where Kafka leads). Both, and
	// Missing, are measured after the sync's own writes.
	Lag, Lead  int64
	Missing    int // ZooKeeper offsets Kafka has no commit for yet
	Partitions int
	Invalid    int // ZooKeeper offsets that could not be used (reported by the plan too)
	// Blocked counts, by class, the partitions this sync did not mirror into Kafka because plan
	// would block them (out of the log under --out-of-range=fail, topic or partition missing,
	// invalid znode, a difference under --on-conflict=fail); nil when none, and when the sync
	// did not mirror into Kafka at all (kafka-primary, an active group). BlockedReasons is a
	// short sample of plan's reasons for them, and of keep-alives left out because Kafka's
	// offset is outside the log (those are not counted in Blocked: plan has no entry for them).
	Blocked        map[migrate.Class]int
	BlockedReasons []string
	Writes         []Write
	DryRun         bool
	// Rewinds are the ZooKeeper offsets that went backwards since the mirror's previous read of
	// the group: flagged, not blocked (under --on-conflict=max Kafka is not moved back with
	// them). A legacy client that rewinds by mistake (kafka-node 2.6.1 does against Kafka 3.x)
	// looks like this, and so does an operator's deliberate reset.
	Rewinds []Rewind
	// KafkaErr is set when this sync could not read Kafka (or describe the group's topics), so
	// it wrote nothing: Phase is decided from Kafka as last seen, Lag, Lead and Missing measure
	// ZooKeeper as just read against Kafka's last acknowledged commits, and Writes are the
	// mirror writes into Kafka left pending (where ZooKeeper leads or Kafka has no commit), each
	// failed with this error. The group is synced again at the next poll; the failure is also
	// reported once for the whole batch (Observer.SyncFailed). Without this report the lag of a
	// Kafka outage would read as the lag before it.
	KafkaErr error
}

// Rewind is one ZooKeeper offset lower than the mirror's previous read of it (both after
// --offset-adjust).
type Rewind struct {
	migrate.TopicPartition
	From, To int64
}

// Written counts the writes that succeeded (or would, in a dry run).
func (s GroupStatus) Written() int {
	n := 0
	for _, w := range s.Writes {
		if w.Err == nil && !w.Refused {
			n++
		}
	}
	return n
}

// Mirror keeps Kafka in step with ZooKeeper for the selected groups until its context ends.
type Mirror struct {
	Legacy    migrate.LegacyStore
	Watcher   migrate.LegacyWatcher // nil: no watches, the periodic resync alone
	Kafka     migrate.KafkaState
	Committer migrate.OffsetCommitter
	// LegacyWriter is required with Reverse.
	LegacyWriter migrate.LegacyOffsetWriter
	Filter       migrate.Filter
	// Translator is set when Kafka is a cluster MirrorMaker 2 replicates the znodes' cluster
	// into and Legacy is read through it (migrate.Translated): the Filter's topics are the
	// source's, and Kafka's commits are selected by the source topic theirs replicate.
	Translator migrate.Translator
	// Policy decides each write into Kafka as plan and copy decide it (the zero Policy is
	// migrate.DefaultPolicy). ConflictZK is refused: the mirror never moves Kafka backwards.
	Policy   migrate.Policy
	Observer Observer
	Limiter  RateLimiter // nil: no limit
	// Lease, when set, is held for every write (lease.go); nil: no lease, every write goes.
	Lease migrate.WriteLease
	// Metadata gives the provenance committed with a write to Kafka (nil: none); mtime is the
	// ZooKeeper znode's (zero for a keep-alive).
	Metadata func(group string, mtime time.Time) string

	// KafkaUnreachable reports a failed read or commit that means Kafka as a whole does not
	// answer (no broker reachable, a timeout), as opposed to one group's own refusal. After one,
	// syncs try Kafka for one poll interval only, until a read succeeds (kafkadown.go). Nil: no
	// failure is taken for an outage, and every sync tries with the adapter's whole budget.
	KafkaUnreachable func(error) bool

	// Resync, when it receives, starts a full resync at once (the CLI sends on SIGHUP).
	Resync <-chan struct{}

	Execute bool // false: a dry run, nothing is written, writes are reported
	Reverse bool // mirror Kafka into ZooKeeper for kafka-primary groups

	ResyncInterval    time.Duration // full re-read of every group (default 5m)
	KeepaliveInterval time.Duration // re-commit unchanged offsets (default offsets retention / 2)
	PollInterval      time.Duration // Kafka state poll, for phase changes and --reverse (default 2s)
	BatchDelay        time.Duration // coalescing window after a change (default 20ms)
	BatchGroups       int           // groups read and synced together (default 64)
	FlushTimeout      time.Duration // how long the final flush may take after ctx ends (default 10s)
	Now               func() time.Time
}

func (m *Mirror) withDefaults(ctx context.Context) (Mirror, error) {
	c := *m
	if c.Legacy == nil || c.Kafka == nil || c.Committer == nil || c.Observer == nil {
		return c, fmt.Errorf("mirror: Legacy, Kafka, Committer and Observer are required")
	}
	if c.Reverse && c.LegacyWriter == nil {
		return c, fmt.Errorf("mirror: --reverse needs a legacy writer")
	}
	if err := CheckPolicy(c.Policy, c.Reverse); err != nil {
		return c, fmt.Errorf("mirror: %w", err)
	}
	c.Policy = policyDefaults(c.Policy)
	// A group map: each legacy group is mirrored into (and, with Reverse, back from) the Kafka
	// group it lands in; liveness stays the legacy group's.
	c.Kafka, c.Committer = migrate.MapKafka(c.Kafka, c.Filter.GroupMap), migrate.MapCommitter(c.Committer, c.Filter.GroupMap)
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.KeepaliveInterval <= 0 {
		ret, err := c.Kafka.OffsetsRetention(ctx)
		if err != nil {
			return c, fmt.Errorf("mirror: read offsets.retention.minutes for the keep-alive: %w", err)
		}
		if ret <= 0 {
			// Unknown (a broker before Kafka 0.11 cannot report it): a guessed interval could
			// outlast a lowered retention and let the mirrored offsets expire unseen.
			return c, errors.New("mirror: the broker does not report offsets.retention.minutes (no DescribeConfigs before Kafka 0.11): give a keep-alive interval below half of it (--keepalive-interval; the broker default before Kafka 2.0 is 1 day)")
		}
		c.KeepaliveInterval = ret / 2
	}
	def(&c.KeepaliveInterval, 24*time.Hour)
	def(&c.ResyncInterval, 5*time.Minute)
	def(&c.PollInterval, 2*time.Second)
	def(&c.BatchDelay, 20*time.Millisecond)
	def(&c.FlushTimeout, 10*time.Second)
	if c.BatchGroups <= 0 {
		c.BatchGroups = 64
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Run mirrors until ctx ends, then flushes the groups with pending changes and returns nil.
// A store that fails is retried at the next poll; Run returns an error only when it cannot
// start (the groups cannot be listed) or watching fails for good. A selection that matches
// nothing is not an error: groups created later are picked up as they appear.
func (m *Mirror) Run(ctx context.Context) error {
	cfg, err := m.withDefaults(ctx)
	if err != nil {
		return err
	}
	sel, err := selectGroups(ctx, cfg.Legacy, cfg.Filter)
	if err != nil {
		return err
	}
	l := newLoop(&cfg, sel.Groups)
	sel.Added = sel.Groups
	cfg.Observer.SelectionChanged(sel)
	l.watch(ctx)
	defer l.stopWatch()
	return l.run(ctx)
}
