package offsetlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// Topic is Kafka's offset store.
const Topic = kafkaconn.OffsetsTopic

// ErrNoOffsetsTopic means the cluster has no __consumer_offsets yet: no group was ever
// coordinated there, so no offset is stored. Callers may read it as an empty result.
var ErrNoOffsetsTopic = errors.New("topic " + Topic + " does not exist")

// Committed is one committed offset as replayed from __consumer_offsets.
type Committed struct {
	Offset      int64
	LeaderEpoch int32 // -1 when the commit carried none
	Metadata    string
	// CommitTimestamp is the commit time the coordinator stored (UTC).
	CommitTimestamp time.Time
	// ExpireTimestamp is set only by value v1 (explicit retention); zero otherwise.
	ExpireTimestamp time.Time
	// ValueVersion is the OffsetCommitValue schema version of the record (0..4).
	ValueVersion int16
	// LogOffset is the record's offset in its __consumer_offsets partition.
	LogOffset int64
	// Transactional is set for a commit made by a transaction (TxnOffsetCommit).
	Transactional bool
}

// Offsets holds committed offsets by group, then topic/partition.
type Offsets map[string]map[migrate.TopicPartition]Committed

// Stats describes a read: what the records were, and what was skipped and why.
type Stats struct {
	Partitions     int             // __consumer_offsets partitions read
	Batches        int64           // record batches, control batches included
	ControlBatches int64           // transaction markers
	Records        int64           // data records (not markers)
	ValueVersions  map[int16]int64 // offset commit values by schema version, all groups
	Tombstones     int64           // offset deletions, all groups
	GroupRecords   int64           // group metadata records (key v2), skipped
	UnknownRecords int64           // other key versions (4.x group types...), skipped
	UnknownControl int64           // control records of unknown type, ignored
	Misplaced      int64           // offset records in a partition that is not their group's
	// TransactionalCommits were applied by a COMMIT marker; AbortedCommits dropped by ABORT.
	TransactionalCommits, AbortedCommits int64
	// OpenTransactions is the producers whose offset commits still wait for a marker at the
	// snapshot's end, PendingCommits their commits: not applied (OffsetFetch hides them too).
	OpenTransactions int
	PendingCommits   int64
}

func newStats() Stats { return Stats{ValueVersions: map[int16]int64{}} }

func (s *Stats) add(o Stats) {
	s.Partitions += o.Partitions
	s.Batches += o.Batches
	s.ControlBatches += o.ControlBatches
	s.Records += o.Records
	for v, n := range o.ValueVersions {
		s.ValueVersions[v] += n
	}
	s.Tombstones += o.Tombstones
	s.GroupRecords += o.GroupRecords
	s.UnknownRecords += o.UnknownRecords
	s.UnknownControl += o.UnknownControl
	s.Misplaced += o.Misplaced
	s.TransactionalCommits += o.TransactionalCommits
	s.AbortedCommits += o.AbortedCommits
	s.OpenTransactions += o.OpenTransactions
	s.PendingCommits += o.PendingCommits
}

// Config configures Open. It follows kafkawriter.Config, and connects the same way
// (kafkaconn): the zero value of every field but Bootstrap means its default.
type Config struct {
	Bootstrap []string
	// ClientID is sent with every request. Default kafkaconn.DefaultClientID.
	ClientID string
	// Version is "auto" (default: negotiated from the broker's ApiVersions) or a Kafka version
	// X.Y.Z, at least kafkaconn.MinVersion.
	Version string
	// DialTimeout bounds each TCP connect. Default kafkaconn.DefaultDialTimeout.
	DialTimeout time.Duration
	// RetryTimeout bounds the retries after leader moves or broken connections, counted from
	// the last fetch that made progress. Default kafkaconn.DefaultRetryTimeout.
	RetryTimeout time.Duration
	// Logger receives this package's logs. Default: discard.
	Logger *slog.Logger
	// Security is TLS and SASL, exactly as the migration's own Kafka client connects.
	Security kafkaconn.Security
}

// Reader reads __consumer_offsets. It is safe for concurrent use: each Read has its own state.
type Reader struct {
	client       sarama.Client
	owned        bool
	fetchVersion int16
	retryTimeout time.Duration
	log          *slog.Logger
}

// Open connects to the cluster at cfg.Bootstrap. Close the Reader when done.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	conn := kafkaconn.Config{Bootstrap: cfg.Bootstrap, ClientID: cfg.ClientID, Version: cfg.Version,
		DialTimeout: cfg.DialTimeout, Logger: cfg.Logger, Security: cfg.Security}.WithDefaults()
	version, err := kafkaconn.Negotiate(ctx, conn)
	if err != nil {
		return nil, err
	}
	// SaramaConfig asks for no topic's metadata: only __consumer_offsets matters, refreshed
	// before each read.
	conf, err := kafkaconn.SaramaConfig(conn, version)
	if err != nil {
		return nil, err
	}
	c, err := kafkaconn.NewClient(ctx, conn, conf)
	if err != nil {
		return nil, err
	}
	_, err = kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, c.RefreshMetadata(Topic) })
	if err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) { // no offsets yet: Read reports ErrNoOffsetsTopic
		closeQuietly(conn.Logger, c)
		return nil, fmt.Errorf("metadata of %s: %w", Topic, err)
	}
	r := NewReader(c, conn.Logger)
	r.owned = true
	r.retryTimeout = cmp.Or(cfg.RetryTimeout, kafkaconn.DefaultRetryTimeout)
	return r, nil
}

// NewReader reads through an existing client, which the caller keeps and closes; log may be
// nil. Its Config().Version picks the request versions.
func NewReader(client sarama.Client, log *slog.Logger) *Reader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reader{client: client, fetchVersion: logbatch.FetchVersion(client.Config().Version),
		retryTimeout: kafkaconn.DefaultRetryTimeout, log: log}
}

// Close closes the client if Open made it.
func (r *Reader) Close() error {
	if !r.owned {
		return nil
	}
	if err := r.client.Close(); err != nil {
		return fmt.Errorf("close kafka client: %w", err)
	}
	return nil
}

// Read replays every partition of __consumer_offsets from its log start up to its high
// watermark as of the start of the call (records written later are not read) and returns the
// committed offsets of the groups keep accepts (nil: all groups).
func (r *Reader) Read(ctx context.Context, keep func(group string) bool) (Offsets, Stats, error) {
	n, err := r.partitionCount(ctx)
	if err != nil {
		return nil, Stats{}, err
	}
	parts := make([]int32, n)
	for i := range parts {
		parts[i] = int32(i)
	}
	return r.read(ctx, parts, n, keep)
}

// ReadGroups is Read for the given groups only: it reads just their partitions (Partition).
func (r *Reader) ReadGroups(ctx context.Context, groups []string) (Offsets, Stats, error) {
	n, err := r.partitionCount(ctx)
	if err != nil {
		return nil, Stats{}, err
	}
	want := make(map[string]bool, len(groups))
	parts := map[int32]bool{}
	for _, g := range groups {
		want[g] = true
		parts[Partition(g, n)] = true
	}
	return r.read(ctx, slices.Sorted(maps.Keys(parts)), n, func(g string) bool { return want[g] })
}

func (r *Reader) partitionCount(ctx context.Context) (int32, error) {
	parts, err := kafkaconn.Call(ctx, func() ([]int32, error) {
		if err := r.client.RefreshMetadata(Topic); err != nil {
			return nil, err
		}
		return r.client.Partitions(Topic)
	})
	if errors.Is(err, sarama.ErrUnknownTopicOrPartition) || (err == nil && len(parts) == 0) {
		return 0, ErrNoOffsetsTopic
	}
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", Topic, err)
	}
	return int32(len(parts)), nil
}

func closeQuietly(log *slog.Logger, c sarama.Client) {
	if err := c.Close(); err != nil && log != nil {
		log.Warn("close abandoned kafka client", "err", err)
	}
}
