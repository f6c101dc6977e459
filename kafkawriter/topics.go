package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// listOffsetsChunk bounds the partitions of one ListOffsets request, so a very large cluster
// does not build one huge request and response.
const listOffsetsChunk = 5000

// Topics implements migrate.KafkaState: existence, partitions and log start/end of each topic.
// It sends one Metadata request for all topics, then per leader broker one ListOffsets request
// for the log starts (time -2) and one for the log ends (time -1, the high watermark) of all the
// partitions it leads. Partitions whose leader moved are retried after fresh metadata.
func (c *Client) Topics(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	out := make(map[string]migrate.TopicInfo, len(topics))
	todo := uniqueSorted(topics)
	err := c.retry(ctx, "describe topics", func(int) error {
		if len(todo) == 0 {
			return nil
		}
		done, err := c.describeTopics(ctx, todo)
		for t, info := range done {
			out[t] = info
		}
		todo = slices.DeleteFunc(todo, func(t string) bool { _, ok := done[t]; return ok })
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// describeTopics returns the topics it could describe completely and an error (retriable or
// not) for the first one it could not.
func (c *Client) describeTopics(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	md, err := c.metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	var first firstError
	done, byLeader := readyTopics(md, &first)
	for _, t := range topics {
		if _, ok := done[t]; !ok && first.err == nil {
			first.err = fmt.Errorf("metadata of topic %q: %w", t, sarama.ErrIncompleteResponse)
		}
	}
	failed, err := c.fillRanges(ctx, byLeader, done, &first)
	if err != nil {
		return nil, err
	}
	for t := range failed {
		delete(done, t)
	}
	return done, first.err
}

// firstError keeps the first error of a describe, preferring a permanent one.
type firstError struct{ err error }

func (f *firstError) keep(err error) {
	if f.err == nil || (kafkaconn.Retriable(f.err) && !kafkaconn.Retriable(err)) {
		f.err = err // a permanent error must not hide behind a retriable one
	}
}

// readyTopics returns the topics the metadata settles (missing ones as not existing, the others
// with empty partition ranges) and their partitions by leader; topics with a leaderless or
// failing partition are left out, their error kept.
func readyTopics(md *sarama.MetadataResponse, first *firstError) (map[string]migrate.TopicInfo, map[int32][]migrate.TopicPartition) {
	done := make(map[string]migrate.TopicInfo)
	byLeader := make(map[int32][]migrate.TopicPartition)
	for _, t := range md.Topics {
		switch t.Err {
		case sarama.ErrNoError:
		case sarama.ErrUnknownTopicOrPartition, sarama.ErrInvalidTopic:
			done[t.Name] = migrate.TopicInfo{Exists: false}
			continue
		default:
			first.keep(fmt.Errorf("metadata of topic %q: %w", t.Name, t.Err))
			continue
		}
		if !partitionsReady(t, first) {
			continue
		}
		for _, p := range t.Partitions {
			byLeader[p.Leader] = append(byLeader[p.Leader], migrate.TopicPartition{Topic: t.Name, Partition: p.ID})
		}
		done[t.Name] = migrate.TopicInfo{Exists: true, Partitions: make(map[int32]migrate.PartitionRange, len(t.Partitions))}
	}
	return done, byLeader
}

// partitionsReady reports whether every partition of the topic has a leader that answers,
// keeping an error for each one that does not.
func partitionsReady(t *sarama.TopicMetadata, first *firstError) bool {
	ready := true
	for _, p := range t.Partitions {
		// REPLICA_NOT_AVAILABLE only says a follower is down; the leader still answers.
		if p.Leader < 0 || (p.Err != sarama.ErrNoError && p.Err != sarama.ErrReplicaNotAvailable) {
			err := kerrOrNil(p.Err)
			if err == nil {
				err = sarama.ErrLeaderNotAvailable
			}
			first.keep(fmt.Errorf("metadata of topic %q partition %d: %w", t.Name, p.ID, err))
			ready = false
		}
	}
	return ready
}

// fillRanges asks each leader for the log starts and ends of its partitions and writes them
// into done; it returns the topics with a partition it could not learn, their error kept.
func (c *Client) fillRanges(ctx context.Context, byLeader map[int32][]migrate.TopicPartition, done map[string]migrate.TopicInfo, first *firstError) (map[string]bool, error) {
	var (
		mu     sync.Mutex
		failed = make(map[string]bool)
	)
	type job struct {
		leader int32
		tps    []migrate.TopicPartition
		time   int64
	}
	var jobs []job
	for leader, tps := range byLeader {
		for part := range slices.Chunk(tps, listOffsetsChunk) {
			jobs = append(jobs, job{leader, part, sarama.OffsetOldest}, job{leader, part, sarama.OffsetNewest})
		}
	}
	err := forEach(ctx, c.cfg.Parallel, jobs, func(ctx context.Context, j job) error {
		offsets, errs, err := c.listOffsets(ctx, j.leader, j.tps, j.time)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			for _, tp := range j.tps {
				failed[tp.Topic] = true
			}
			first.keep(err)
			return nil
		}
		for tp, perr := range errs {
			failed[tp.Topic] = true
			first.keep(perr)
		}
		for tp, off := range offsets {
			setRange(done, tp, j.time, off)
		}
		return nil
	})
	return failed, err
}

// setRange records one partition's log start (time OffsetOldest) or end.
func setRange(done map[string]migrate.TopicInfo, tp migrate.TopicPartition, time, off int64) {
	info := done[tp.Topic]
	r := info.Partitions[tp.Partition]
	if time == sarama.OffsetOldest {
		r.LogStart = off
	} else {
		r.LogEnd = off
	}
	info.Partitions[tp.Partition] = r
}

// metadata asks one broker about the topics, never creating any.
func (c *Client) metadata(ctx context.Context, topics []string) (*sarama.MetadataResponse, error) {
	req, all := metadataRequest(c.version, topics)
	resp, err := kafkaconn.Call(ctx, func() (*sarama.MetadataResponse, error) {
		b := c.sc.LeastLoadedBroker()
		if b == nil {
			return nil, sarama.ErrOutOfBrokers
		}
		return b.GetMetadata(req)
	})
	if err != nil {
		return nil, fmt.Errorf("metadata of %d topics: %w", len(topics), err)
	}
	if all {
		resp.Topics = onlyTopics(resp.Topics, topics)
	}
	return resp, nil
}

// metadataRequest builds the Metadata request for topics, and reports whether it asks for
// every topic instead. Before Metadata v4 (Kafka 0.11) a request naming a missing topic makes a
// broker with auto.create.topics.enable (its default) create it: the plan of a group whose topic
// was deleted would bring the topic back, empty. Asking for all topics creates nothing; the
// cost is a larger answer on those old clusters.
func metadataRequest(v sarama.KafkaVersion, topics []string) (*sarama.MetadataRequest, bool) {
	if !v.IsAtLeast(sarama.V0_11_0_0) {
		return sarama.NewMetadataRequest(v, nil), true // nil: every topic (v1+)
	}
	req := sarama.NewMetadataRequest(v, topics)
	req.AllowAutoTopicCreation = false
	return req, false
}

// onlyTopics keeps the metadata of the wanted topics, and reports each wanted topic the answer
// lacks as UNKNOWN_TOPIC_OR_PARTITION, as a request naming it would have.
func onlyTopics(got []*sarama.TopicMetadata, wanted []string) []*sarama.TopicMetadata {
	byName := make(map[string]*sarama.TopicMetadata, len(got))
	for _, t := range got {
		byName[t.Name] = t
	}
	out := make([]*sarama.TopicMetadata, 0, len(wanted))
	for _, name := range wanted {
		t, ok := byName[name]
		if !ok {
			t = &sarama.TopicMetadata{Name: name, Err: sarama.ErrUnknownTopicOrPartition}
		}
		out = append(out, t)
	}
	return out
}

// broker returns the client's connection to a broker id seen in metadata, refreshing the
// client's broker list when the id is new to it.
func (c *Client) broker(ctx context.Context, id int32) (*sarama.Broker, error) {
	b, err := c.sc.Broker(id)
	if errors.Is(err, sarama.ErrBrokerNotFound) {
		if _, rerr := kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, c.sc.RefreshMetadata() }); rerr != nil {
			return nil, fmt.Errorf("refresh brokers: %w", rerr)
		}
		b, err = c.sc.Broker(id)
	}
	if err != nil {
		return nil, fmt.Errorf("broker %d: %w", id, err)
	}
	return b, nil
}

// listOffsets sends one ListOffsets request to a leader. It returns the offsets found, the
// per-partition errors, or an error for the request as a whole.
func (c *Client) listOffsets(ctx context.Context, leader int32, tps []migrate.TopicPartition, at int64) (map[migrate.TopicPartition]int64, map[migrate.TopicPartition]error, error) {
	b, err := c.broker(ctx, leader)
	if err != nil {
		return nil, nil, err
	}
	req := sarama.NewOffsetRequest(c.version)
	for _, tp := range tps {
		req.AddBlock(tp.Topic, tp.Partition, at, 1)
	}
	resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
	if err != nil {
		return nil, nil, fmt.Errorf("list offsets on broker %d (%s): %w", leader, b.Addr(), err)
	}
	offsets := make(map[migrate.TopicPartition]int64, len(tps))
	errs := make(map[migrate.TopicPartition]error)
	for _, tp := range tps {
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		switch {
		case blk == nil:
			errs[tp] = fmt.Errorf("list offsets of topic %q partition %d: %w", tp.Topic, tp.Partition, sarama.ErrIncompleteResponse)
		case blk.Err != sarama.ErrNoError:
			errs[tp] = fmt.Errorf("list offsets of topic %q partition %d: %w", tp.Topic, tp.Partition, blk.Err)
		default:
			offsets[tp] = blk.Offset
		}
	}
	return offsets, errs, nil
}

func uniqueSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
