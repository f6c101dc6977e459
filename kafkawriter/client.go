package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Client is a connection to one Kafka cluster. It is safe for concurrent use.
type Client struct {
	cfg Config
	sc  sarama.Client // metadata, leaders, admin requests
	// groupConns carries the coordinator requests (FindCoordinator, OffsetCommit, OffsetFetch,
	// DescribeGroups), each group always on the same one. A broker handles one request per
	// connection at a time, and a commit's answer waits for its append to __consumer_offsets
	// (which Kafka 4.x's coordinator holds back to batch appends), so commits of many groups
	// only run in parallel over several connections (docs/benchmarks.md has the figures).
	// groupConns[0] is sc.
	groupConns []sarama.Client
	version    sarama.KafkaVersion
}

var (
	_ migrate.KafkaState      = (*Client)(nil)
	_ migrate.OffsetCommitter = (*Client)(nil)
)

// Open connects to the cluster: kafkaconn.Negotiate settles the protocol level (and is the
// reachability check), then one client with every broker's metadata and Connections-1 more for
// coordinator requests are opened with it.
func Open(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	version, err := kafkaconn.Negotiate(ctx, cfg.conn())
	if err != nil {
		return nil, err
	}
	conf, err := kafkaconn.SaramaConfig(cfg.conn(), version)
	if err != nil {
		return nil, err
	}
	// One full metadata fetch when the client starts registers every broker (leaders, the
	// controller, broker ids for DescribeConfigs); with Full=false sarama would connect to
	// nothing and refuse Controller(). Still no periodic refresh: Topics asks for fresh
	// metadata of exactly the topics it needs each time.
	conf.Metadata.Full = true
	sc, err := kafkaconn.NewClient(ctx, cfg.conn(), conf)
	if err != nil {
		return nil, err
	}
	if sc, version, err = oldestLevel(ctx, cfg, sc, conf, version); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, sc: sc, groupConns: []sarama.Client{sc}, version: version}
	// The extra connections keep SaramaConfig's Full=false: they only ever talk to
	// coordinators, which FindCoordinator names.
	extra, err := kafkaconn.SaramaConfig(cfg.conn(), version)
	if err != nil {
		c.closeQuietly()
		return nil, err
	}
	for len(c.groupConns) < cfg.Connections {
		gc, err := kafkaconn.NewClient(ctx, cfg.conn(), extra)
		if err != nil {
			c.closeQuietly()
			return nil, err
		}
		c.groupConns = append(c.groupConns, gc)
	}
	return c, nil
}

// oldestLevel asks every broker of sc's metadata for its release (kafkaconn.ClusterVersion) and,
// when one is older than version, opens the client again at the oldest's level.
func oldestLevel(ctx context.Context, cfg Config, sc sarama.Client, conf *sarama.Config, version sarama.KafkaVersion) (sarama.Client, sarama.KafkaVersion, error) {
	var addrs []string
	for _, b := range sc.Brokers() {
		addrs = append(addrs, b.Addr())
	}
	use, err := kafkaconn.ClusterVersion(ctx, cfg.conn(), version, addrs)
	if err == nil && use == version {
		return sc, version, nil
	}
	if cerr := sc.Close(); cerr != nil {
		cfg.Logger.Warn("close kafka client", "err", cerr)
	}
	if err != nil {
		return nil, version, err
	}
	again, err := kafkaconn.SaramaConfig(cfg.conn(), use)
	if err != nil {
		return nil, use, err
	}
	again.Metadata.Full = conf.Metadata.Full
	sc, err = kafkaconn.NewClient(ctx, cfg.conn(), again)
	return sc, use, err
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

// retry runs op under kafkaconn.Retry until it succeeds, returns a non-retriable error, ctx
// ends or RetryTimeout passes. op gets the number of the attempt (0 first) to refresh state
// before a retry.
func (c *Client) retry(ctx context.Context, what string, op func(attempt int) error) error {
	return c.retryFor(ctx, what, c.cfg.RetryTimeout, op)
}

// retryFor is retry bounded by d instead of RetryTimeout.
func (c *Client) retryFor(ctx context.Context, what string, d time.Duration, op func(attempt int) error) error {
	return kafkaconn.Retry(ctx, c.cfg.Logger, what, d, op)
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
		if _, err := kafkaconn.Call(ctx, func() (struct{}, error) {
			// Later lookups compute the coordinator from this metadata: bring it up to date too.
			// A failure here only leaves them to FindCoordinator, which the next line asks.
			if err := sc.RefreshMetadata(kafkaconn.OffsetsTopic); err != nil {
				c.cfg.Logger.Debug("refresh the metadata of the offsets topic", "group", group, "err", err)
			}
			return struct{}{}, sc.RefreshCoordinator(group)
		}); err != nil {
			return nil, fmt.Errorf("find coordinator of group %q: %s%w", group, authPrefix(err), err)
		}
	}
	b, err := kafkaconn.Call(ctx, func() (*sarama.Broker, error) { return sc.Coordinator(group) })
	if err != nil {
		return nil, fmt.Errorf("find coordinator of group %q: %s%w", group, authPrefix(err), err)
	}
	return b, nil
}

// offsetsLeader is the group's coordinator as the brokers compute it: the leader of the
// __consumer_offsets partition that holds the group (kafkaconn.OffsetsPartition over the
// topic's partition count), from the client's metadata, without a FindCoordinator round trip
// for every group: a plan needs every group's coordinator, and one lookup per group costs
// broker CPU that, on a machine shared with ZooKeeper, slows the ZooKeeper read running beside
// it (docs/benchmarks.md). Nil when the metadata does not tell (the topic hidden from this user, no leader): FindCoordinator
// then. A wrong answer costs a retry, never a misplaced write or read: a broker refuses a group
// it does not coordinate (NOT_COORDINATOR), and the retry refreshes the metadata and asks
// FindCoordinator.
func offsetsLeader(ctx context.Context, sc sarama.Client, group string) *sarama.Broker {
	n := offsetsPartitions(ctx, sc)
	if n == 0 {
		return nil
	}
	return partitionLeader(ctx, sc, kafkaconn.OffsetsPartition(group, n))
}

// leaders is offsetsLeader for many groups at once: the metadata is read once per connection
// set and __consumer_offsets partition, not once per group, and no goroutine is started per
// group (dual-commit's poll describes every watched group each interval: thousands). The
// groups it cannot tell are returned in rest, for coordinator.
func (c *Client) leaders(ctx context.Context, groups []string) (by map[*sarama.Broker][]string, rest []string) {
	type key struct {
		sc   sarama.Client
		part int32
	}
	counts := map[sarama.Client]int32{}
	found := map[key]*sarama.Broker{}
	by = map[*sarama.Broker][]string{}
	for _, g := range groups {
		sc := c.forGroup(g)
		n, ok := counts[sc]
		if !ok {
			n = offsetsPartitions(ctx, sc)
			counts[sc] = n
		}
		if n == 0 {
			rest = append(rest, g)
			continue
		}
		k := key{sc, kafkaconn.OffsetsPartition(g, n)}
		b, ok := found[k]
		if !ok {
			b = partitionLeader(ctx, sc, k.part)
			found[k] = b
		}
		if b == nil {
			rest = append(rest, g)
			continue
		}
		by[b] = append(by[b], g)
	}
	return by, rest
}

// offsetsPartitions is __consumer_offsets' partition count in sc's metadata (0: unknown).
func offsetsPartitions(ctx context.Context, sc sarama.Client) int32 {
	parts, err := kafkaconn.Call(ctx, func() ([]int32, error) { return sc.Partitions(kafkaconn.OffsetsTopic) })
	if err != nil {
		return 0
	}
	return int32(len(parts))
}

// partitionLeader is the leader of __consumer_offsets partition part in sc's metadata (nil:
// unknown).
func partitionLeader(ctx context.Context, sc sarama.Client, part int32) *sarama.Broker {
	b, err := kafkaconn.Call(ctx, func() (*sarama.Broker, error) { return sc.Leader(kafkaconn.OffsetsTopic, part) })
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
