// Package mm2log reads MirrorMaker 2's offset-syncs topic (mm2-offset-syncs.<target>.internal)
// from a Kafka cluster and returns each source partition's syncs, in log order, for
// migrate/mm2 to translate with. It fetches by itself rather than through sarama's consumer
// because the end of a compacted log, or of one whose last batch is a transaction marker, is
// known exactly only from each batch's last offset.
package mm2log

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/logbatch"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// ErrNoTopic means the cluster has no offset-syncs topic of that name.
var ErrNoTopic = errors.New("offset-syncs topic not found")

// Topic is the offset-syncs topic MirrorMaker 2 writes on the source cluster (its default
// offset-syncs.topic.location) for the replication into targetAlias, under the default
// replication policy separator ".".
func Topic(targetAlias string) string { return TopicSeparated(targetAlias, ".") }

// TopicSeparated is the offset-syncs topic named after alias under replication.policy.separator
// sep: since KIP-690 MirrorMaker 2 names its internal topics with the policy's separator
// (replication.policy.internal.topic.separator.enabled, true by default). It names the topic
// after the cluster that does not hold it (MirrorSourceConfig.offsetSyncsTopic): the target's
// alias when the topic is on the source, the source's when offset-syncs.topic.location is target.
func TopicSeparated(alias, sep string) string {
	return "mm2-offset-syncs" + sep + alias + sep + "internal"
}

// Config configures Open, as offsetlog.Config does: the zero value of every field but
// Bootstrap means its default.
type Config struct {
	Bootstrap []string
	// Cluster names the cluster in errors ("source", "target"); default "the cluster".
	Cluster string
	// ClientID is sent with every request. Default kafkaconn.DefaultClientID.
	ClientID string
	// Version is "auto" (default) or a Kafka version X.Y.Z, as for kafkaconn.Config.
	Version     string
	DialTimeout time.Duration
	// RetryTimeout bounds the retries after leader moves or broken connections, counted from
	// the last fetch that made progress. Default kafkaconn.DefaultRetryTimeout.
	RetryTimeout time.Duration
	Logger       *slog.Logger
	// Security is TLS and SASL, exactly as the migration's own Kafka clients connect.
	Security kafkaconn.Security
}

// Log is what a Read found.
type Log struct {
	Topic string
	// Syncs holds each source partition's syncs, added in the order of the topic.
	Syncs map[migrate.TopicPartition]mm2.Syncs
	// Records is the offset syncs read; ControlBatches the transaction markers passed over.
	Records, ControlBatches int64
	// Start and End are each partition of the topic's log start when it was first read, and its
	// high watermark when the latest read began: the records read are exactly [Start, End).
	Start, End map[int32]int64
}

// Reader reads offset-syncs topics. Each Read has its own state.
type Reader struct {
	client       sarama.Client
	owned        bool
	cluster      string
	fetchVersion int16
	retryTimeout time.Duration
	log          *slog.Logger
}

// Open connects to the cluster at cfg.Bootstrap through kafkaconn (TLS, SASL and Kerberos as
// configured). Close the Reader when done.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	conn := kafkaconn.Config{Bootstrap: cfg.Bootstrap, ClientID: cfg.ClientID, Version: cfg.Version,
		DialTimeout: cfg.DialTimeout, Logger: cfg.Logger, Security: cfg.Security}.WithDefaults()
	version, err := kafkaconn.Negotiate(ctx, conn)
	if err != nil {
		return nil, err
	}
	conf, err := kafkaconn.SaramaConfig(conn, version)
	if err != nil {
		return nil, err
	}
	c, err := kafkaconn.NewClient(ctx, conn, conf)
	if err != nil {
		return nil, err
	}
	r := NewReader(c, cfg.Cluster, conn.Logger)
	r.owned = true
	r.retryTimeout = cmp.Or(cfg.RetryTimeout, kafkaconn.DefaultRetryTimeout)
	r.cluster = cmp.Or(cfg.Cluster, "the cluster") + " at " + strings.Join(cfg.Bootstrap, ",")
	return r, nil
}

// NewReader reads through an existing client, which the caller keeps and closes; cluster
// names it in errors, log may be nil. Its Config().Version picks the request versions.
func NewReader(client sarama.Client, cluster string, log *slog.Logger) *Reader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reader{client: client, cluster: cmp.Or(cluster, "the cluster"), fetchVersion: logbatch.FetchVersion(client.Config().Version),
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

// Read reads every partition of topic (MirrorMaker 2 makes one) from its log start up to its
// high watermark as of the start of the call, decoding each record as an offset sync. A record
// that does not decode fails the read, naming its offset: a sync skipped could make a
// translation land past records the consumer has not read.
func (r *Reader) Read(ctx context.Context, topic string) (Log, error) {
	return r.Update(ctx, Log{Topic: topic})
}

// Update returns prev with the offset syncs written to its topic since prev was read; prev is
// not changed (a translator may be reading it). The syncs already read stay: the topic is
// compacted, and a later read whole would find fewer of them and place some offsets lower than
// an earlier one did. A topic that changed other than by growing (its log start past prev's
// end, its end below it, its partitions others) is read whole again.
func (r *Reader) Update(ctx context.Context, prev Log) (Log, error) {
	out := Log{Topic: prev.Topic, Syncs: maps.Clone(prev.Syncs), Records: prev.Records, ControlBatches: prev.ControlBatches, Start: prev.Start}
	if out.Syncs == nil {
		out.Syncs = map[migrate.TopicPartition]mm2.Syncs{}
	}
	cloned := map[migrate.TopicPartition]bool{}
	add := func(rec logbatch.Record) error {
		s, err := mm2.DecodeOffsetSync(rec.Key, rec.Value)
		if err != nil {
			return err
		}
		tp := migrate.TopicPartition{Topic: s.Topic, Partition: s.Partition}
		syncs := out.Syncs[tp]
		if !cloned[tp] {
			syncs, cloned[tp] = syncs.Clone(), true
		}
		syncs.Add(s)
		out.Syncs[tp] = syncs
		return nil
	}
	start, end, n, err := r.scan(ctx, prev.Topic, prev.End, add)
	if errors.Is(err, errReadAgain) {
		r.log.Info("reading MirrorMaker 2's offset syncs whole again", "topic", prev.Topic, "why", err)
		return r.Update(ctx, Log{Topic: prev.Topic})
	}
	if err != nil {
		return Log{}, err
	}
	if out.Start == nil {
		out.Start = start
	}
	out.End, out.Records, out.ControlBatches = end, out.Records+n.records, out.ControlBatches+n.controlBatches
	return out, nil
}

// errReadAgain means a read from where the last one ended cannot go on: the topic changed
// other than by growing.
var errReadAgain = errors.New("the topic changed since the last read")

// scan reads every partition p of topic from from[p] (its log start when from is nil) up to
// its high watermark as of the call, handing each data record to add, and returns each
// partition's log start and that high watermark.
func (r *Reader) scan(ctx context.Context, topic string, from map[int32]int64, add func(logbatch.Record) error) (start, end map[int32]int64, n counts, err error) {
	parts, err := r.partitions(ctx, topic)
	if err != nil {
		return nil, nil, counts{}, err
	}
	if from != nil && len(parts) != len(from) {
		return nil, nil, counts{}, fmt.Errorf("%w: %d partitions, %d at the last read", errReadAgain, len(parts), len(from))
	}
	start, end = map[int32]int64{}, map[int32]int64{}
	for _, p := range parts {
		pr := &progress{topic: topic, part: p, maxBytes: fetchPartitionBytes}
		if err := r.retry(ctx, topic, "list offsets of "+topic, func() error { return r.bounds(ctx, pr) }); err != nil {
			return nil, nil, counts{}, err
		}
		start[p], end[p] = pr.next, pr.end
		if from != nil {
			last, ok := from[p]
			switch {
			case !ok:
				return nil, nil, counts{}, fmt.Errorf("%w: partition %d is new", errReadAgain, p)
			case last < pr.next:
				return nil, nil, counts{}, fmt.Errorf("%w: partition %d starts at %d, past %d where the last read ended", errReadAgain, p, pr.next, last)
			case last > pr.end:
				return nil, nil, counts{}, fmt.Errorf("%w: partition %d ends at %d, before %d where the last read ended", errReadAgain, p, pr.end, last)
			}
			pr.next = last
		}
		for pr.next < pr.end {
			if err := r.retry(ctx, topic, "fetch "+topic, func() error { return r.fetch(ctx, pr, add, &n) }); err != nil {
				return nil, nil, counts{}, err
			}
		}
	}
	return start, end, n, nil
}

// partitions lists topic's partitions, or says clearly that the topic is not there.
func (r *Reader) partitions(ctx context.Context, topic string) ([]int32, error) {
	parts, err := kafkaconn.Call(ctx, func() ([]int32, error) {
		if err := r.client.RefreshMetadata(topic); err != nil {
			return nil, err
		}
		return r.client.Partitions(topic)
	})
	if errors.Is(err, sarama.ErrUnknownTopicOrPartition) || (err == nil && len(parts) == 0) {
		return nil, fmt.Errorf("%w: %s on %s: check the alias it is named after (the target's on the source, the source's on the target), that MirrorMaker 2 runs "+
			"and has synced offsets, and which cluster holds it (offset-syncs.topic.location: source by default, or target)",
			ErrNoTopic, topic, r.cluster)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata of %s on %s: %w", topic, r.cluster, err)
	}
	return parts, nil
}

// retry runs op under kafkaconn.Retry, refreshing topic's metadata before each new attempt so
// a moved leader is found again. op keeps the progress it made when it fails.
func (r *Reader) retry(ctx context.Context, topic, what string, op func() error) error {
	return kafkaconn.Retry(ctx, r.log, what, r.retryTimeout, func(attempt int) error {
		if attempt > 0 {
			if _, err := kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, r.client.RefreshMetadata(topic) }); err != nil {
				r.log.Debug("refresh metadata before retry", "topic", topic, "err", err)
			}
		}
		return op()
	})
}
