package bench_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/IBM/sarama"
)

// saramaConfig is for the benchmark's own requests: 2.8 is accepted by Kafka 3.9 and 4.x
// (KIP-896 removed only older request versions) and gives OffsetCommit v8.
func saramaConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.ClientID = "zk2kafka-bench"
	conf.Version = sarama.V2_8_0_0
	conf.Metadata.AllowAutoTopicCreation = false
	return conf
}

func newSarama(bootstrap string) (sarama.Client, error) {
	c, err := sarama.NewClient([]string{bootstrap}, saramaConfig())
	if err != nil {
		return nil, fmt.Errorf("connect to kafka %s: %w", bootstrap, err)
	}
	return c, nil
}

// naiveWrite is one partition for the naive writer.
type naiveWrite struct {
	group, topic string
	partition    int32
	offset       int64
	metadata     string
}

// naiveCommit is the writer a migration script would write: for every partition, one admin
// OffsetCommit (generation -1, no member id, leader epoch -1, broker-default retention) sent to
// the group's coordinator, waiting for each answer before the next.
func naiveCommit(c sarama.Client, writes []naiveWrite) error {
	for _, w := range writes {
		coord, err := c.Coordinator(w.group)
		if err != nil {
			return fmt.Errorf("find coordinator of group %q: %w", w.group, err)
		}
		req := sarama.NewOffsetCommitRequest(c.Config(), w.group)
		req.ConsumerGroupGeneration = sarama.GroupGenerationUndefined
		req.ConsumerID = ""
		req.RetentionTime = -1 // encoded only in v2-v4; 0 there would expire the offset at once
		req.AddBlockWithLeaderEpoch(w.topic, w.partition, w.offset, -1, 0, w.metadata)
		resp, err := coord.CommitOffset(req)
		if err != nil {
			return fmt.Errorf("commit group %q %s/%d: %w", w.group, w.topic, w.partition, err)
		}
		kerr, ok := resp.Errors[w.topic][w.partition]
		if !ok {
			return fmt.Errorf("commit group %q %s/%d: no answer for the partition", w.group, w.topic, w.partition)
		}
		if kerr != sarama.ErrNoError {
			return fmt.Errorf("commit group %q %s/%d: %w", w.group, w.topic, w.partition, kerr)
		}
	}
	return nil
}

// deleteGroups deletes the benchmark's own groups (DeleteGroups, 500 per request per
// coordinator), so their offsets are gone and the next copy writes every partition again. A
// group without commits is already absent. A non-empty group is an error: never ours.
func deleteGroups(c sarama.Client, groups []string) error {
	byCoord := map[int32][]string{}
	brokers := map[int32]*sarama.Broker{}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		sem  = make(chan struct{}, 16)
	)
	for _, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			b, err := c.Coordinator(g)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("find coordinator of group %q: %w", g, err))
				return
			}
			byCoord[b.ID()] = append(byCoord[b.ID()], g)
			brokers[b.ID()] = b
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for id, gs := range byCoord {
		for part := range slices.Chunk(gs, 500) {
			resp, err := brokers[id].DeleteGroups(&sarama.DeleteGroupsRequest{Version: 2, Groups: part})
			if err != nil {
				return fmt.Errorf("delete %d groups on broker %d: %w", len(part), id, err)
			}
			for _, g := range part {
				kerr, ok := resp.GroupErrorCodes[g]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("delete group %q: no answer", g))
				case kerr != sarama.ErrNoError && kerr != sarama.ErrGroupIDNotFound:
					errs = append(errs, fmt.Errorf("delete group %q: %w", g, kerr))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// deleteTopics deletes the benchmark's own topics.
func deleteTopics(bootstrap string, topics []string) error {
	admin, err := sarama.NewClusterAdmin([]string{bootstrap}, saramaConfig())
	if err != nil {
		return fmt.Errorf("kafka admin %s: %w", bootstrap, err)
	}
	var errs []error
	for _, t := range topics {
		if err := admin.DeleteTopic(t); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			errs = append(errs, fmt.Errorf("delete topic %q: %w", t, err))
		}
	}
	if err := admin.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close kafka admin: %w", err))
	}
	return errors.Join(errs...)
}
