package migrate

import (
	"context"
	"errors"
	"time"
)

// LegacyStore is the legacy (ZooKeeper) offset store as the core needs it. Its clauses are
// checked, against the fakes and the real reader alike, by migrate/contract.TestLegacyStore.
type LegacyStore interface {
	// ListGroups returns the names of every group under /consumers, sorted: a group with
	// nothing below it too. A store without /consumers has no groups (not an error).
	ListGroups(ctx context.Context) ([]string, error)
	// ReadGroups reads the given groups and calls emit once per group, in any order, as each
	// completes: exactly once for each group asked and for no other. Reads of many groups are
	// pipelined by the implementation. A problem with a single znode is reported in that
	// LegacyOffset's Invalid field, never as an error; an error means the read as a whole
	// failed and nothing partial should be trusted. An error of emit ends the read and is
	// returned (wrapped). A group missing from the store (deleted since it was listed) is
	// emitted empty, like a group with nothing below it; an offset znode deleted since it was
	// listed is absent. Each group's Offsets are sorted by topic, partition, path, and its
	// LiveConsumers sorted; the caller owns what it is given.
	ReadGroups(ctx context.Context, groups []string, emit func(LegacyGroup) error) error
}

// KafkaState is the read side of Kafka as the core needs it. Its clauses are checked by
// migrate/contract.TestKafkaState.
type KafkaState interface {
	// Topics describes the given topics: existence, partitions and their log start and end.
	// Every topic asked is in the answer; one Kafka does not know has Exists false, and asking
	// never creates it. A partition's LogStart is its first record kept, LogEnd the offset of
	// the next record (the high watermark).
	Topics(ctx context.Context, topics []string) (map[string]TopicInfo, error)
	// Groups returns state, members and committed offsets of each given group. Every group
	// asked is in the answer: one the coordinator does not know has the zero GroupState. The
	// caller owns the maps it is given.
	Groups(ctx context.Context, groups []string) (map[string]GroupState, error)
	// ActiveGroups returns the state of those of groups that Kafka consumers are in now (joined
	// members, or a rebalance under way: Active), without their commits; a group left out is
	// Empty, Dead or unknown to Kafka. Members may be 0 where the store's listing has no member
	// counts: Active holds by the state. It is the cheap read of whether Kafka consumers
	// joined, which dual-commit polls between its syncs.
	ActiveGroups(ctx context.Context, groups []string) (map[string]GroupState, error)
	// OffsetsRetention is the broker's offsets.retention.minutes as a duration.
	OffsetsRetention(ctx context.Context) (time.Duration, error)
}

// OffsetCommitter writes offsets into Kafka's offset store through the group coordinator.
// Its clauses are checked by migrate/contract.TestOffsetCommitter.
type OffsetCommitter interface {
	// Commit writes the offsets of one group as an admin commit (generation -1, no member).
	// The returned slice has one CommitError per requested partition, in request order; error
	// is for a failure of the whole group (coordinator unreachable after retries, context
	// cancelled: it wraps ctx's error). A written offset replaces the committed one, backwards
	// too, with the Commit's Metadata. Per partition: an unknown topic or partition fails
	// wrapping ErrPartitionMissing; a negative offset is refused (Kafka would read it as no
	// commit); a group with members or rebalancing refuses every partition wrapping
	// ErrGroupActive. A partition's failure leaves the others of the call written.
	Commit(ctx context.Context, group string, commits []Commit) ([]CommitError, error)
}

// LegacyRechecker is the cheap re-read copy makes of a batch just before writing it: the
// groups' liveness registrations and the current value of the offset znodes it is about to
// copy, read by their known paths without listing the offsets tree again. A LegacyStore that
// also implements it lets copy re-check a batch at the cost of one read per planned write;
// otherwise copy re-reads the batch's groups whole. What re-checks liveness alone needs it:
// copy --recheck=gates and restore (Copier.GatesOnly, Copier.Replan) refuse to write through
// a store without it. Its clauses are checked by
// migrate/contract.TestLegacyRechecker.
type LegacyRechecker interface {
	// RecheckGroups returns one LegacyGroup per request, in request order, with fresh
	// LiveConsumers and a fresh read of each requested znode (Offset, Mtime, Invalid; Topic,
	// Partition and Path as requested), and of no other. A znode deleted since is absent; a
	// group deleted since is returned empty; a request without offsets re-reads the liveness
	// alone. Errors are as for ReadGroups: the re-check as a whole failed.
	RecheckGroups(ctx context.Context, reqs []RecheckRequest) ([]LegacyGroup, error)
}

// RecheckRequest names one group and the offset znodes of it to read again.
type RecheckRequest struct {
	Group string
	// Offsets carries Topic, Partition and Path (the full znode path, as the store reported
	// it) of each znode; other fields are ignored.
	Offsets []LegacyOffset
}

// LegacyWatcher tells dual-commit's mirror (package mirror) when the legacy store may have
// changed: a group's znodes (offsets, ids, owners), or the list of groups itself. It is a hint
// only: the mirror re-reads through LegacyStore.
type LegacyWatcher interface {
	// Watch watches until ctx ends. It takes the groups to watch from selections: the first
	// receive is the initial selection, each later one replaces it. It also watches the list of
	// groups (the children of /consumers) from the start, before the first selection is armed,
	// so a group created at any time is reported through ev.GroupsChanged. Each group of a
	// selection is reported through ev.Changed once its watches are set (so a change made
	// between the mirror's read and the arming is not missed), then after every change under
	// /consumers/<group>, and again after the watches had to be set afresh (session expiry).
	// A group dropped from the selection is no longer reported. Callbacks come from any
	// goroutine and must not block. Watch returns nil when ctx ends, an error only when
	// watching is impossible.
	Watch(ctx context.Context, selections <-chan []string, ev WatchEvents) error
}

// WatchEvents are the callbacks of a Watch; nil ones are not called.
type WatchEvents struct {
	// Changed: something under /consumers/<group> may have changed.
	Changed func(group string)
	// GroupsChanged: a group was created or deleted under /consumers, or the watch on the list
	// was set afresh: list the groups again.
	GroupsChanged func()
	// Armed: true once every watch of the latest selection is set; false while they are being
	// set again (the session expired, or setting them failed and is retried).
	Armed func(bool)
}

// LegacyOffsetWriter writes offsets into the legacy store (the reverse mirror, --reverse).
type LegacyOffsetWriter interface {
	// AdvanceOffsets moves each given offset znode of group forward to its offset, atomically
	// per znode (a compare-and-set): only where the znode is missing or holds a valid smaller
	// offset at the moment of the write, so a legacy commit that lands after the mirror's last
	// read is never overwritten. A group missing from the legacy store (deleted) is never
	// created again: all its partitions are left alone. It returns the partitions it left
	// alone, with why.
	AdvanceOffsets(ctx context.Context, group string, offsets map[TopicPartition]int64) (map[TopicPartition]string, error)
}

// ErrLeaseNotHeld is wrapped by WriteLease.Hold when this instance must not write now: another
// instance on overlapping groups holds the lease, or this one may have lost it (its ZooKeeper
// session is disconnected for too long, or expired).
var ErrLeaseNotHeld = errors.New("dual-commit write lease not held")

// WriteLease is the single-writer lease of dual-commit: two instances on the same groups would
// move Kafka offsets backwards (admin commits are not compare-and-set). Nothing can fence a
// write already sent, so the lease gives each write a deadline instead: the earliest moment the
// lease could pass to another instance.
type WriteLease interface {
	// Hold returns a context for one write, derived from ctx, that ends no later than the moment
	// the lease could be lost (and at once when it is lost), and its cancel func. When this
	// instance must not write now it returns an error wrapping ErrLeaseNotHeld, naming the
	// holder when known.
	Hold(ctx context.Context) (context.Context, context.CancelFunc, error)
	// Gained returns a channel that is closed once Hold can succeed: at once when it can now.
	Gained() <-chan struct{}
}

// LegacyLease is the WriteLease as the legacy source opens it (zkreader.Lease, on the watcher's
// session): the mirror holds it for each write; its owner reports State and closes it.
type LegacyLease interface {
	WriteLease
	// State says whether this instance writes now, and who holds the lease.
	State() (held bool, holder string)
	Close()
}

// LegacyWriter is the write side of the legacy store (zkreader.Reader implements it): restore
// to ZooKeeper, dual-commit --reverse and verify's cutover marker. It is not part of
// LegacyStore because plan, copy and verify's comparison must never need it.
type LegacyWriter interface {
	// WriteOffsets sets the group's offset znodes as given (restore --to zk).
	WriteOffsets(ctx context.Context, group string, offsets map[TopicPartition]int64) error
	LegacyOffsetWriter // dual-commit --reverse: forward only, a compare-and-set per znode
	// MarkMigrated writes the group's cutover marker; Marker reads it back.
	MarkMigrated(ctx context.Context, group string, data []byte) error
	Marker(ctx context.Context, group string) ([]byte, bool, error)
}

// KafkaStore is Kafka read, committed into and named: what copy and a restore into Kafka
// (package archive) plan from and commit through. An adapter (kafkawriter.Client) is one value
// serving all three; each part keeps its own contract suite.
type KafkaStore interface {
	KafkaState
	OffsetCommitter
	KafkaCluster
}

// CommittedSource reads groups' committed offsets some other way than the coordinator's
// OffsetFetch, for verify --via-topic: package offsetlog decodes __consumer_offsets itself, so
// the check does not trust the path copy wrote through.
type CommittedSource interface {
	// Committed returns the latest commit of every partition of each given group, in the
	// Committed and Metadata fields of a GroupState (State and Members are not set). A group
	// without commits is in the answer with an empty Committed; a tombstoned (deleted) partition
	// is absent. A group asked and missing from the answer is an incomplete read: the caller
	// must refuse it, never take it for a group without commits. An error means the read as a
	// whole failed.
	Committed(ctx context.Context, groups []string) (map[string]GroupState, error)
}

// KafkaCluster is a Kafka that names its cluster (kafkawriter.Client; migratetest.KafkaStore).
// Copy asks it whose offsets it is about to write: two clusters holding equal offsets plan
// alike, and only the id tells a saved plan made on one from a plan of the other.
type KafkaCluster interface {
	// ClusterID is the cluster id of Kafka's Metadata answer, the same on every call to one
	// cluster; "" (not an error) when the brokers give none (before 0.10.1). An error means
	// Kafka could not be asked.
	ClusterID(ctx context.Context) (string, error)
}

// ErrLivenessUnseen is wrapped by the refusal of a write into Kafka from a SnapshotStore
// without the caller's word that the legacy consumers are stopped: nothing was written.
var ErrLivenessUnseen = errors.New("the legacy consumers' liveness cannot be seen")

// SnapshotStore is a LegacyStore read from ZooKeeper as it was at one moment (a copy of its
// data directory), not from a running ensemble. Its liveness registrations are those of that
// moment, with no session left to expire them: whether the legacy consumers run now cannot be
// seen, so the liveness gate cannot block a write. Copy refuses to write into Kafka from such a
// store (ErrLivenessUnseen, CheckWriteFrom) unless the caller says the legacy consumers are
// stopped: one still running would commit past the copied offsets, and Kafka would then hold
// offsets it had already consumed beyond.
type SnapshotStore interface {
	LegacyStore
	// Snapshot says what the store is a snapshot of and why its liveness tells nothing now,
	// in the words of the refusal; it is never empty.
	Snapshot() string
}

// LegacyRoots is implemented by a legacy store that can name the folder it lists groups under
// and find other group folders one chroot level away (zkreader.Reader). It is asked only when a
// selection is refused, to say where the groups may be.
type LegacyRoots interface {
	// GroupsRoot is the folder ListGroups lists, as the operator would name it: "<chroot>/consumers".
	GroupsRoot() string
	// NearbyRoots returns the folders of groups, with at least one group, one chroot level up or
	// down from GroupsRoot's.
	NearbyRoots(ctx context.Context) ([]NearbyRoot, error)
}

// NearbyRoot is a folder of legacy groups one chroot level away from the one looked under.
type NearbyRoot struct {
	Root    string // the groups folder, e.g. "/kafka/consumers"
	Connect string // the connect string that reads it (--zk), e.g. "zk1:2181/kafka"
	Groups  int    // how many groups it holds
}
