package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v5"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Client is a connection to one Kafka cluster. It is safe for concurrent use.
type Client struct {
	cfg Config
	sc  sarama.Client // metadata, leaders, admin requests
	// groupConns carries the coordinator requests (FindCoordinator, OffsetCommit, OffsetFetch,
	// DescribeGroups), each group always on the same one. A broker handles one request per
	// connection at a time, and Kafka 4.x's coordinator lingers ~5 ms per write, so commits of
	// many groups only run in parallel over several connections (measured on the KRaft stack:
	// 17k offsets/s on one connection, 113k on eight). groupConns[0] is sc.
	groupConns []sarama.Client
	version    sarama.KafkaVersion
}

var (
	_ migrate.KafkaState      = (*Client)(nil)
	_ migrate.OffsetCommitter = (*Client)(nil)
)

// Open connects to the cluster. It first asks a bootstrap broker for its ApiVersions: that is
// the reachability check (an unreachable cluster is one error naming every bootstrap server)
// and, with Version "auto", the source of the protocol level (see milestones).
func Open(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.LibraryDebug {
		// sarama has one process-wide logger and no per-client one: set it only when the
		// operator asked for the library's own logs (--debug).
		sarama.Logger = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	}
	if cfg.Security.InsecureSkipVerify {
		cfg.Logger.Warn("KAFKA TLS CERTIFICATE VERIFICATION IS OFF (insecure-skip-verify): any server can pose as the brokers and read the credentials and offsets sent to them")
	}
	apis, addr, err := probe(ctx, cfg)
	if err != nil {
		return nil, err
	}
	detected, derr := versionFromAPIs(apis)
	version := detected
	if cfg.Version != VersionAuto {
		if version, err = parseVersion(cfg.Version); err != nil {
			return nil, err
		}
	} else if derr != nil {
		return nil, fmt.Errorf("kafka broker %s: %w", addr, derr)
	}
	cfg.Logger.Debug("kafka protocol level", "broker", addr, "detected", detected, "using", version)

	conf, err := baseConfig(cfg)
	if err != nil {
		return nil, err
	}
	conf.Version = version
	sc, err := newSaramaClient(ctx, cfg.Logger, cfg.Bootstrap, conf)
	if err != nil {
		return nil, fmt.Errorf("connect to kafka at %v (%s): %w", cfg.Bootstrap, cfg.Security.Describe(), err)
	}
	c := &Client{cfg: cfg, sc: sc, groupConns: []sarama.Client{sc}, version: version}
	// The extra connections skip the full metadata fetch: they only ever talk to coordinators,
	// which FindCoordinator names.
	extra, err := baseConfig(cfg)
	if err != nil {
		c.closeQuietly()
		return nil, err
	}
	extra.Version = version
	extra.Metadata.Full = false
	for len(c.groupConns) < cfg.Connections {
		gc, err := newSaramaClient(ctx, cfg.Logger, cfg.Bootstrap, extra)
		if err != nil {
			c.closeQuietly()
			return nil, fmt.Errorf("connect to kafka at %v (%s): %w", cfg.Bootstrap, cfg.Security.Describe(), err)
		}
		c.groupConns = append(c.groupConns, gc)
	}
	return c, nil
}

func (c *Client) closeQuietly() {
	if err := c.Close(); err != nil {
		c.cfg.Logger.Warn("close kafka client after a failed open", "err", err)
	}
}

// forGroup is the connection set that carries a group's coordinator requests.
func (c *Client) forGroup(group string) sarama.Client {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(group); i++ {
		h = (h ^ uint32(group[i])) * 16777619
	}
	return c.groupConns[int(h%uint32(len(c.groupConns)))]
}

// newSaramaClient is sarama.NewClient under ctx; a client that connects after ctx ended is
// closed rather than leaked.
func newSaramaClient(ctx context.Context, log *slog.Logger, addrs []string, conf *sarama.Config) (sarama.Client, error) {
	type result struct {
		c   sarama.Client
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := sarama.NewClient(addrs, conf)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				if err := r.c.Close(); err != nil {
					log.Warn("close abandoned kafka client", "err", err)
				}
			}
		}()
		return nil, ctx.Err()
	}
}

func baseConfig(cfg Config) (*sarama.Config, error) {
	conf := sarama.NewConfig()
	if err := cfg.Security.Apply(conf); err != nil {
		return nil, err
	}
	conf.ClientID = cfg.ClientID
	conf.Net.DialTimeout = cfg.DialTimeout
	// A Metadata request for a missing topic must never create it (sarama's default would,
	// on brokers with auto.create.topics.enable).
	conf.Metadata.AllowAutoTopicCreation = false
	// One full metadata fetch when the client starts registers every broker (leaders, the
	// controller, broker ids for DescribeConfigs); with Full=false sarama would connect to
	// nothing and refuse Controller(). No periodic refresh: Topics asks for fresh metadata of
	// exactly the topics it needs each time.
	conf.Metadata.Full = true
	conf.Metadata.RefreshFrequency = 0
	// Below sarama's 30s read timeout, so a slow CreateTopics comes back as REQUEST_TIMED_OUT
	// from the broker rather than as a dropped connection.
	conf.Admin.Timeout = 20 * time.Second
	return conf, nil
}

// Version is the protocol level the client was configured with.
func (c *Client) Version() sarama.KafkaVersion { return c.version }

// Close closes every broker connection.
func (c *Client) Close() error {
	var errs []error
	for _, sc := range c.groupConns {
		if err := sc.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close kafka client: %w", err)
	}
	return nil
}

// retry runs op until it succeeds, returns a non-retriable error, ctx ends or RetryTimeout
// passes. op gets the number of the attempt (0 first) to refresh state before a retry.
func (c *Client) retry(ctx context.Context, what string, op func(attempt int) error) error {
	return c.retryFor(ctx, what, c.cfg.RetryTimeout, op)
}

// retryFor is retry bounded by d instead of RetryTimeout.
func (c *Client) retryFor(ctx context.Context, what string, d time.Duration, op func(attempt int) error) error {
	attempt := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := op(attempt)
		attempt++
		if err != nil && !retriable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(newBackOff()), backoff.WithMaxElapsedTime(d),
		backoff.WithNotify(func(err error, d time.Duration) {
			c.cfg.Logger.Debug("kafka retry", "op", what, "err", err, "in", d)
		}))
	return err
}

func newBackOff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 2 * time.Second
	return b
}

// coordinator returns the group's coordinator: computed from metadata (offsetsLeader), or from
// FindCoordinator when that cannot tell, and from a fresh FindCoordinator (and fresh metadata)
// when refresh is set (after a coordinator error or a broken connection).
func (c *Client) coordinator(ctx context.Context, group string, refresh bool) (*sarama.Broker, error) {
	sc := c.forGroup(group)
	if !refresh {
		if b := offsetsLeader(ctx, sc, group); b != nil {
			return b, nil
		}
	} else {
		if _, err := Call(ctx, func() (struct{}, error) {
			// Later lookups compute the coordinator from this metadata: bring it up to date too.
			_ = sc.RefreshMetadata(offsetsTopic)
			return struct{}{}, sc.RefreshCoordinator(group)
		}); err != nil {
			return nil, fmt.Errorf("find coordinator of group %q: %s%w", group, authPrefix(err), err)
		}
	}
	b, err := Call(ctx, func() (*sarama.Broker, error) { return sc.Coordinator(group) })
	if err != nil {
		return nil, fmt.Errorf("find coordinator of group %q: %s%w", group, authPrefix(err), err)
	}
	return b, nil
}

// offsetsTopic is Kafka's offset store, whose partition leaders coordinate the groups.
const offsetsTopic = "__consumer_offsets"

// offsetsLeader is the group's coordinator as the brokers compute it: the leader of the
// offsetsTopic partition that holds the group (OffsetsPartition over the topic's partition
// count), from the client's metadata, without a FindCoordinator round trip for every group: a
// plan of 1M offsets in 10k groups made 10k of them, each 0.4-1 ms of broker CPU on the 2-core
// development box (100 cold lookups: 40-100 ms), competing with the ZooKeeper read. Nil when
// the metadata does not tell (the topic hidden from this user, no leader): FindCoordinator
// then. A wrong answer costs a retry, never a misplaced write or read: a broker refuses a group
// it does not coordinate (NOT_COORDINATOR), and the retry refreshes the metadata and asks
// FindCoordinator.
func offsetsLeader(ctx context.Context, sc sarama.Client, group string) *sarama.Broker {
	b, err := Call(ctx, func() (*sarama.Broker, error) {
		parts, err := sc.Partitions(offsetsTopic)
		if err != nil || len(parts) == 0 {
			return nil, err
		}
		return sc.Leader(offsetsTopic, OffsetsPartition(group, int32(len(parts))))
	})
	if err != nil {
		return nil
	}
	return b
}

// forEach calls fn for every item, at most n at a time. It stops starting new calls after the
// first error or when ctx ends, and returns that first error.
func forEach[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(n, 1))
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil { // the first error came while this call waited for a slot
				return nil
			}
			return fn(gctx, it)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
