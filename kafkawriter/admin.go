package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// DefaultOffsetsRetention is Kafka's default offsets.retention.minutes (7 days, since 2.0).
const DefaultOffsetsRetention = 10080 * time.Minute

const retentionConfig = "offsets.retention.minutes"

// createTopicWait bounds how long CreateTopic waits for a new topic's partitions to get leaders.
const createTopicWait = 5 * time.Minute

// OffsetsRetention implements migrate.KafkaState: offsets.retention.minutes of one broker
// (DescribeConfigs), or DefaultOffsetsRetention when the broker does not report it. Brokers
// before 0.11 have no DescribeConfigs: the retention is unknown then (0, as migrate.KafkaState
// allows), never guessed, since the default of those releases (1 day) may have been lowered.
func (c *Client) OffsetsRetention(ctx context.Context) (time.Duration, error) {
	if !c.version.IsAtLeast(sarama.V0_11_0_0) {
		c.cfg.Logger.Warn("the broker cannot report offsets.retention.minutes (no DescribeConfigs before Kafka 0.11): the plan shows no retention, and dual-commit needs --keepalive-interval",
			"kafka", c.version)
		return 0, nil
	}
	var out time.Duration
	err := c.retry(ctx, "describe broker config", func(attempt int) error {
		b, err := c.anyBroker(ctx, attempt > 0)
		if err != nil {
			return err
		}
		req := &sarama.DescribeConfigsRequest{
			Version: describeConfigsVersion(c.version),
			Resources: []*sarama.ConfigResource{{
				Type: sarama.BrokerResource, Name: strconv.Itoa(int(b.ID())), ConfigNames: []string{retentionConfig},
			}},
		}
		resp, err := kafkaconn.Call(ctx, func() (*sarama.DescribeConfigsResponse, error) { return b.DescribeConfigs(req) })
		if err != nil {
			return fmt.Errorf("describe config of broker %d (%s): %w", b.ID(), b.Addr(), err)
		}
		out, err = retentionFrom(b.ID(), resp)
		return err
	})
	if err != nil {
		return 0, err
	}
	return out, nil
}

func retentionFrom(id int32, resp *sarama.DescribeConfigsResponse) (time.Duration, error) {
	for _, r := range resp.Resources {
		if kerr := sarama.KError(r.ErrorCode); kerr != sarama.ErrNoError {
			return 0, fmt.Errorf("describe config of broker %d: %w: %s", id, kerr, r.ErrorMsg)
		}
		for _, e := range r.Configs {
			if e.Name != retentionConfig {
				continue
			}
			m, err := strconv.ParseInt(e.Value, 10, 64)
			if err != nil || m <= 0 {
				return 0, fmt.Errorf("broker %d reports %s=%q: expected a positive number of minutes", id, retentionConfig, e.Value)
			}
			return time.Duration(m) * time.Minute, nil
		}
	}
	return DefaultOffsetsRetention, nil
}

func describeConfigsVersion(v sarama.KafkaVersion) int16 {
	// As sarama's ClusterAdmin chooses from 2.0; v0 (0.11) and v1 (1.1) name the same config.
	switch {
	case v.IsAtLeast(sarama.V2_8_0_0):
		return 4
	case v.IsAtLeast(sarama.V2_6_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 1
	default:
		return 0
	}
}

// anyBroker returns a connected broker with a known id (broker configs are asked of the broker
// itself, by id).
func (c *Client) anyBroker(ctx context.Context, refresh bool) (*sarama.Broker, error) {
	if refresh {
		if _, err := kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, c.sc.RefreshMetadata() }); err != nil {
			return nil, fmt.Errorf("refresh brokers: %w", err)
		}
	}
	for _, b := range c.sc.Brokers() {
		if b.ID() >= 0 {
			return c.broker(ctx, b.ID())
		}
	}
	return nil, fmt.Errorf("no broker known: %w", sarama.ErrOutOfBrokers)
}

// CreateTopic creates a topic with replication factor 1 (seeding and tests), and waits until
// every partition has a leader. A topic that already exists with that many partitions is fine.
func (c *Client) CreateTopic(ctx context.Context, name string, partitions int32) error {
	if partitions <= 0 {
		return fmt.Errorf("create topic %q: partitions must be positive, got %d", name, partitions)
	}
	// The admin shares c's client: closing it would close c, so it is not closed.
	admin, err := kafkaconn.Call(ctx, func() (sarama.ClusterAdmin, error) { return sarama.NewClusterAdminFromClient(c.sc) })
	if err != nil {
		return fmt.Errorf("create topic %q: %w", name, err)
	}
	detail := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}
	_, err = kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, admin.CreateTopic(name, detail, false) })
	existed := errors.Is(err, sarama.ErrTopicAlreadyExists)
	// A topic of thousands of partitions can take longer than the request timeout; the
	// controller goes on creating it, so a timeout means "wait and see", not failure.
	timedOut := errors.Is(err, sarama.ErrRequestTimedOut) || kafkaconn.IsNetError(err)
	if err != nil && !existed && !timedOut {
		return fmt.Errorf("create topic %q: %w", name, err)
	}
	// Metadata reaches the brokers after CreateTopics returns: wait until Topics sees it all.
	return c.retryFor(ctx, "wait for topic", createTopicWait, func(int) error {
		info, err := c.Topics(ctx, []string{name})
		if err != nil {
			return err
		}
		t := info[name]
		switch {
		case existed && t.Exists && len(t.Partitions) != int(partitions):
			return fmt.Errorf("create topic %q: it exists with %d partitions, not %d", name, len(t.Partitions), partitions)
		case !t.Exists || len(t.Partitions) < int(partitions):
			return fmt.Errorf("topic %q not visible yet: %w", name, sarama.ErrLeaderNotAvailable)
		case len(t.Partitions) != int(partitions):
			return fmt.Errorf("create topic %q: it has %d partitions, not %d", name, len(t.Partitions), partitions)
		}
		return nil
	})
}

// ClusterID returns the cluster id of the brokers' Metadata answer ("" from brokers older than
// 0.10.1, which have none). The request names __consumer_offsets: a Metadata request without
// topics asks for every topic of the cluster.
func (c *Client) ClusterID(ctx context.Context) (string, error) {
	resp, err := c.metadata(ctx, []string{"__consumer_offsets"})
	if err != nil {
		return "", fmt.Errorf("read the kafka cluster id: %w", err)
	}
	if resp.ClusterID == nil {
		return "", nil
	}
	return *resp.ClusterID, nil
}
