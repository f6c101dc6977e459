package kafkawriter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v5"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Client is a connection to one Kafka cluster. It is safe for concurrent use.
type Client struct {
	cfg     Config
	sc      sarama.Client
	version sarama.KafkaVersion
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

	conf := baseConfig(cfg)
	conf.Version = version
	sc, err := newSaramaClient(ctx, cfg.Logger, cfg.Bootstrap, conf)
	if err != nil {
		return nil, fmt.Errorf("connect to kafka at %v: %w", cfg.Bootstrap, err)
	}
	return &Client{cfg: cfg, sc: sc, version: version}, nil
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

func baseConfig(cfg Config) *sarama.Config {
	conf := sarama.NewConfig()
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
	conf.Admin.Timeout = 30 * time.Second
	return conf
}

// Version is the protocol level the client was configured with.
func (c *Client) Version() sarama.KafkaVersion { return c.version }

// Close closes every broker connection.
func (c *Client) Close() error {
	if err := c.sc.Close(); err != nil {
		return fmt.Errorf("close kafka client: %w", err)
	}
	return nil
}

// retry runs op until it succeeds, returns a non-retriable error, ctx ends or RetryTimeout
// passes. op gets the number of the attempt (0 first) to refresh state before a retry.
func (c *Client) retry(ctx context.Context, what string, op func(attempt int) error) error {
	attempt := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := op(attempt)
		attempt++
		if err != nil && !retriable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(newBackOff()), backoff.WithMaxElapsedTime(c.cfg.RetryTimeout),
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

// coordinator returns the group's coordinator, asking FindCoordinator again when refresh is
// set (after a coordinator error or a broken connection).
func (c *Client) coordinator(ctx context.Context, group string, refresh bool) (*sarama.Broker, error) {
	if refresh {
		if _, err := call(ctx, func() (struct{}, error) { return struct{}{}, c.sc.RefreshCoordinator(group) }); err != nil {
			return nil, fmt.Errorf("find coordinator of group %q: %w", group, err)
		}
	}
	b, err := call(ctx, func() (*sarama.Broker, error) { return c.sc.Coordinator(group) })
	if err != nil {
		return nil, fmt.Errorf("find coordinator of group %q: %w", group, err)
	}
	return b, nil
}

// forEach calls fn for every item, at most n at a time. It stops starting new calls after the
// first error or when ctx ends, and returns that first error.
func forEach[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	sem := make(chan struct{}, max(n, 1))
	for _, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, it); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
