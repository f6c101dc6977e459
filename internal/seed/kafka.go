package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// leaderWait bounds the wait for new topics' partitions to get leaders.
const leaderWait = 60 * time.Second

// kafkaConfig is the seeding client at version, the broker's negotiated protocol level.
func kafkaConfig(sec kafkaconn.Security, version sarama.KafkaVersion) (*sarama.Config, error) {
	cfg := sarama.NewConfig()
	cfg.ClientID = "zk2kafka-seed"
	cfg.Version = version
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1
	if version.IsAtLeast(sarama.V0_11_0_0) {
		// Idempotence keeps a retried batch from being written twice: the log end must be
		// exactly Records, or offsets seeded "at the log end" would not be.
		cfg.Producer.Idempotent = true
		cfg.Producer.Retry.Max = 10
	} else {
		// No idempotent producer before 0.11 (InitProducerId): a retry could write a batch
		// twice, so a failed batch fails the seed instead.
		cfg.Producer.Retry.Max = 0
	}
	cfg.Producer.Flush.Messages = 500
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Admin.Timeout = 30 * time.Second
	return cfg, sec.Apply(cfg)
}

// seedKafka creates the topic pool (idempotently) and tops every partition up to exactly
// Records records. It returns the number of records produced by this run.
func seedKafka(ctx context.Context, log *slog.Logger, bootstrap []string, s Spec) (int64, error) {
	version, err := kafkaconn.Negotiate(ctx, kafkaconn.Config{Bootstrap: bootstrap, Logger: log, Security: s.Security})
	if err != nil {
		return 0, err
	}
	cfg, err := kafkaConfig(s.Security, version)
	if err != nil {
		return 0, err
	}
	client, err := sarama.NewClient(bootstrap, cfg)
	if err != nil {
		return 0, fmt.Errorf("connect to kafka %v: %w", bootstrap, err)
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return 0, errors.Join(fmt.Errorf("kafka cluster admin: %w", err), client.Close())
	}
	defer func() {
		if err := admin.Close(); err != nil { // closes client too
			log.Warn("close kafka admin", "err", err)
		}
	}()

	topics := s.TopicNames()
	if err := createTopics(ctx, admin, topics, s.Partitions); err != nil {
		return 0, err
	}
	if err := waitLeaders(ctx, client, topics, s.Partitions); err != nil {
		return 0, err
	}
	ends, err := logEndsWhenReady(ctx, client, topics, s.Partitions)
	if err != nil {
		return 0, err
	}
	missing := map[partitionKey]int64{}
	var total int64
	for tp, end := range ends {
		if end > int64(s.Records) {
			return 0, fmt.Errorf("topic %q partition %d already holds %d records, more than the spec's %d: use other names",
				tp.topic, tp.partition, end, s.Records)
		}
		if n := int64(s.Records) - end; n > 0 {
			missing[tp] = n
			total += n
		}
	}
	start := time.Now()
	if err := produce(ctx, log, client, missing, total); err != nil {
		return 0, err
	}
	ends, err = logEndsWhenReady(ctx, client, topics, s.Partitions)
	if err != nil {
		return 0, err
	}
	for tp, end := range ends {
		if end != int64(s.Records) {
			return 0, fmt.Errorf("topic %q partition %d: log end offset %d after producing, want %d", tp.topic, tp.partition, end, s.Records)
		}
	}
	log.Info("seeded kafka", "topics", len(topics), "partitions", len(ends), "produced", total,
		"produce_elapsed", time.Since(start).Round(time.Millisecond))
	return total, nil
}

type partitionKey struct {
	topic     string
	partition int32
}

// createTopics creates each topic with replication 1; one that exists must have the spec's
// partition count, or the seeded offsets would not match it.
func createTopics(ctx context.Context, admin sarama.ClusterAdmin, topics []string, partitions int32) error {
	for _, t := range topics {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false)
		if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create topic %q: %w", t, err)
		}
	}
	// A topic just created may be unknown to the broker's metadata for a moment (KRaft).
	deadline := time.Now().Add(leaderWait)
	for {
		err := checkPartitions(admin, topics, partitions)
		if err == nil || !leaderMoving(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func checkPartitions(admin sarama.ClusterAdmin, topics []string, partitions int32) error {
	meta, err := admin.DescribeTopics(topics)
	if err != nil {
		return fmt.Errorf("describe topics: %w", err)
	}
	for _, m := range meta {
		if m.Err != sarama.ErrNoError {
			return fmt.Errorf("describe topic %q: %w", m.Name, m.Err)
		}
		if int32(len(m.Partitions)) != partitions {
			return fmt.Errorf("topic %q exists with %d partitions, the spec wants %d", m.Name, len(m.Partitions), partitions)
		}
	}
	return nil
}

// waitLeaders waits until every partition has a leader: a topic just created is not writable yet.
func waitLeaders(ctx context.Context, client sarama.Client, topics []string, partitions int32) error {
	deadline := time.Now().Add(leaderWait)
	for {
		var lastErr error
		if err := client.RefreshMetadata(topics...); err != nil {
			lastErr = fmt.Errorf("refresh metadata: %w", err)
		}
	scan:
		for _, t := range topics {
			for p := range partitions {
				if _, err := client.Leader(t, p); err != nil {
					lastErr = fmt.Errorf("leader of topic %q partition %d: %w", t, p, err)
					break scan
				}
			}
		}
		if lastErr == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("partitions without leader after %s: %w", leaderWait, lastErr)
		}
		select {
		case <-ctx.Done():
			return errors.Join(lastErr, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logEndsWhenReady is logEnds, retried while partitions are still being handed to their
// leader: on KRaft a new topic's metadata names the leader before that broker has taken over,
// and ListOffsets then fails with NOT_LEADER_OR_FOLLOWER for a moment.
func logEndsWhenReady(ctx context.Context, client sarama.Client, topics []string, partitions int32) (map[partitionKey]int64, error) {
	deadline := time.Now().Add(leaderWait)
	for {
		ends, err := logEnds(client, topics, partitions)
		if err == nil || !leaderMoving(err) || time.Now().After(deadline) {
			return ends, err
		}
		if err := client.RefreshMetadata(topics...); err != nil && !leaderMoving(err) {
			return nil, fmt.Errorf("refresh metadata: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func leaderMoving(err error) bool {
	return errors.Is(err, sarama.ErrNotLeaderForPartition) || errors.Is(err, sarama.ErrLeaderNotAvailable) ||
		errors.Is(err, sarama.ErrUnknownTopicOrPartition) ||
		errors.Is(err, sarama.ErrOffsetNotAvailable)
}

// logEnds lists the log end offset of every partition, one ListOffsets request per leader.
func logEnds(client sarama.Client, topics []string, partitions int32) (map[partitionKey]int64, error) {
	reqs := map[*sarama.Broker]*sarama.OffsetRequest{}
	asked := map[*sarama.Broker][]partitionKey{}
	for _, t := range topics {
		for p := range partitions {
			b, err := client.Leader(t, p)
			if err != nil {
				return nil, fmt.Errorf("leader of topic %q partition %d: %w", t, p, err)
			}
			if reqs[b] == nil {
				reqs[b] = &sarama.OffsetRequest{Version: 1}
			}
			reqs[b].AddBlock(t, p, sarama.OffsetNewest, 1)
			asked[b] = append(asked[b], partitionKey{t, p})
		}
	}
	ends := map[partitionKey]int64{}
	for b, req := range reqs {
		resp, err := b.GetAvailableOffsets(req)
		if err != nil {
			return nil, fmt.Errorf("list offsets from broker %s: %w", b.Addr(), err)
		}
		for _, tp := range asked[b] {
			blk := resp.GetBlock(tp.topic, tp.partition)
			if blk == nil {
				return nil, fmt.Errorf("list offsets: no answer for topic %q partition %d", tp.topic, tp.partition)
			}
			if blk.Err != sarama.ErrNoError {
				return nil, fmt.Errorf("list offsets of topic %q partition %d: %w", tp.topic, tp.partition, blk.Err)
			}
			ends[tp] = blk.Offset
		}
	}
	return ends, nil
}

// produce writes missing[tp] small deterministic records to each partition.
func produce(ctx context.Context, log *slog.Logger, client sarama.Client, missing map[partitionKey]int64, total int64) error {
	if total == 0 {
		return nil
	}
	prod, err := sarama.NewAsyncProducerFromClient(client)
	if err != nil {
		return fmt.Errorf("kafka producer: %w", err)
	}
	go func() {
		defer prod.AsyncClose() // closes Successes and Errors once all in flight are answered
		for tp, n := range missing {
			for i := range n {
				msg := &sarama.ProducerMessage{Topic: tp.topic, Partition: tp.partition,
					Key:   sarama.StringEncoder(strconv.FormatInt(i, 10)),
					Value: sarama.StringEncoder(fmt.Sprintf("seed %s/%d #%d", tp.topic, tp.partition, i))}
				select {
				case prod.Input() <- msg:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var ok, failed int64
	var firstErr error
	succ, errs := prod.Successes(), prod.Errors()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for succ != nil || errs != nil {
		select {
		case _, more := <-succ:
			if !more {
				succ = nil
				continue
			}
			ok++
		case pe, more := <-errs:
			if !more {
				errs = nil
				continue
			}
			failed++
			if firstErr == nil {
				firstErr = fmt.Errorf("produce to topic %q partition %d: %w", pe.Msg.Topic, pe.Msg.Partition, pe.Err)
			}
		case <-tick.C:
			log.Info("seed progress", "phase", "records", "done", ok, "total", total)
		}
	}
	if firstErr != nil {
		return fmt.Errorf("%d of %d records failed: %w", failed, total, firstErr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("produce records: %w", err)
	}
	if ok != total {
		return fmt.Errorf("produced %d records, want %d", ok, total)
	}
	return nil
}
