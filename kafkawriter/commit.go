package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// ErrNegativeOffset marks a commit refused before sending: Kafka reads a negative committed
// offset as "no commit", so writing one would silently erase the group's position.
var ErrNegativeOffset = errors.New("negative offset")

// Commit implements migrate.OffsetCommitter: an admin commit (generation -1, no member id,
// leader epoch -1, broker-default retention) of one group's offsets, in chunks of at most
// ChunkSize partitions and maxChunkBytes estimated record bytes.
//
// The result has one CommitError per element of commits, in order. Partitions that failed with
// a retriable error (coordinator moved or loading, broken connection, timeout) are retried
// alone after FindCoordinator, with backoff, for up to RetryTimeout; other errors are final at
// once. Errors of an active group wrap ErrGroupActive (see IsGroupActive), and every broker
// error wraps its sarama.KError. The error result is set only when the group as a whole
// failed: retries exhausted, coordinator not found, or ctx ended; the slice is complete then too.
func (c *Client) Commit(ctx context.Context, group string, commits []migrate.Commit) ([]migrate.CommitError, error) {
	results := make([]migrate.CommitError, len(commits))
	seen := make(map[migrate.TopicPartition]bool, len(commits))
	var pending []int
	for i, cm := range commits {
		if seen[cm.TopicPartition] {
			return nil, fmt.Errorf("commit group %q: partition %s given twice", group, cm.TopicPartition)
		}
		seen[cm.TopicPartition] = true
		results[i].TopicPartition = cm.TopicPartition
		if cm.Offset < 0 {
			results[i].Err = fmt.Errorf("commit %s of group %q: offset %d: %w", cm.TopicPartition, group, cm.Offset, ErrNegativeOffset)
			continue
		}
		pending = append(pending, i)
	}
	if len(pending) == 0 {
		return results, nil
	}
	err := c.retry(ctx, "commit", func(attempt int) error {
		var err error
		pending, err = c.commitAttempt(ctx, group, commits, pending, results, attempt > 0)
		return err
	})
	if err != nil {
		err = fmt.Errorf("commit group %q: %w", group, err)
		for _, i := range pending {
			if results[i].Err == nil { // never attempted: ctx ended or no coordinator
				results[i].Err = err
			}
		}
		return results, err
	}
	if err := ctx.Err(); err != nil {
		// A cancelled send is not retriable, so retry returned nil: still say the run was stopped.
		return results, fmt.Errorf("commit group %q: %w", group, err)
	}
	return results, nil
}

// commitAttempt sends the pending commits in chunks to the coordinator, records each outcome in
// results, and returns the indexes to retry with the error that makes them retriable.
func (c *Client) commitAttempt(ctx context.Context, group string, commits []migrate.Commit, pending []int, results []migrate.CommitError, refresh bool) ([]int, error) {
	b, err := c.coordinator(ctx, group, refresh)
	if err != nil {
		for _, i := range pending {
			results[i].Err = err
		}
		return pending, err
	}
	var (
		retry    []int
		retryErr error
	)
	batch := make([]migrate.Commit, len(pending))
	for j, i := range pending {
		batch[j] = commits[i]
	}
	offset := 0 // index into pending of the chunk's first commit
	for _, chunk := range chunks(group, batch, c.cfg.ChunkSize, maxChunkBytes) {
		idx := pending[offset : offset+len(chunk)]
		offset += len(chunk)
		if retryErr != nil && !isKError(retryErr) {
			// The connection failed on an earlier chunk: the rest waits for the retry.
			retry = append(retry, idx...)
			continue
		}
		req := newCommitRequest(c.sc.Config(), group, chunk)
		resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetCommitResponse, error) { return b.CommitOffset(req) })
		if err != nil {
			err = fmt.Errorf("commit %d offsets of group %q on coordinator %d (%s): %w", len(chunk), group, b.ID(), b.Addr(), err)
			for _, i := range idx {
				results[i].Err = err
			}
			if kafkaconn.Retriable(err) {
				retry, retryErr = append(retry, idx...), err
			}
			continue
		}
		for _, i := range idx {
			tp := commits[i].TopicPartition
			kerr, ok := resp.Errors[tp.Topic][tp.Partition]
			switch {
			case !ok:
				results[i].Err = partitionError(group, tp, sarama.ErrIncompleteResponse)
			case kerr == sarama.ErrNoError:
				results[i].Err = nil
				continue
			default:
				results[i].Err = partitionError(group, tp, kerr)
			}
			if commitRetriable(results[i].Err) {
				retry, retryErr = append(retry, i), results[i].Err
			}
		}
	}
	return retry, retryErr
}

// commitRetriable is kafkaconn.Retriable for one partition's answer to a commit, less
// UNKNOWN_TOPIC_OR_PARTITION: that goes back to the core at once as migrate.ErrPartitionMissing,
// which checks Kafka's metadata before treating it as final, instead of costing the group its
// whole retry budget for each offset a deleted topic left behind (see kafkaconn.Retriable).
func commitRetriable(err error) bool {
	return kafkaconn.Retriable(err) && !errors.Is(err, migrate.ErrPartitionMissing)
}

func isKError(err error) bool {
	var k sarama.KError
	return errors.As(err, &k)
}

// newCommitRequest builds a fresh request for one chunk. sarama rewrites a request's Version
// in place when it negotiates with the broker, so a request is never reused or shared.
// sarama.NewOffsetCommitRequest picks the version from conf.Version (v6+ from 2.1: leader epoch,
// no retention field; v2-v4 before, with a retention field) and sets generation -1.
func newCommitRequest(conf *sarama.Config, group string, chunk []migrate.Commit) *sarama.OffsetCommitRequest {
	req := sarama.NewOffsetCommitRequest(conf, group)
	req.ConsumerGroupGeneration = sarama.GroupGenerationUndefined
	req.ConsumerID = ""
	// -1: the broker's offsets.retention.minutes. sarama sets it only when it builds v2-v4, but
	// it clamps a v6+ request down to an older coordinator's range (a cluster in a rolling
	// upgrade, older than the bootstrap broker) and then encodes this field as it stands: left
	// at 0 the broker would expire the copied offsets at once.
	req.RetentionTime = -1
	for _, cm := range chunk {
		// AddBlock would write leader epoch 0; -1 means "unknown", as an admin commit should.
		// Before v6 (Kafka 2.1, KIP-320) the field does not exist and is not sent: nothing is
		// lost, an admin commit has no epoch to give. The timestamp argument is only encoded
		// in v1, which this package never sends (MinVersion builds v2).
		req.AddBlockWithLeaderEpoch(cm.Topic, cm.Partition, cm.Offset, -1, 0, cm.Metadata)
	}
	return req
}

func partitionError(group string, tp migrate.TopicPartition, kerr error) error {
	var k sarama.KError
	if errors.As(kerr, &k) && groupActiveKError(k) {
		return fmt.Errorf("commit %s of group %q: %w: %w", tp, group, ErrGroupActive, kerr)
	}
	if errors.Is(kerr, sarama.ErrUnknownTopicOrPartition) {
		return fmt.Errorf("commit %s of group %q: %w: %w", tp, group, migrate.ErrPartitionMissing, kerr)
	}
	if hint := authorizationHint(k); hint != "" {
		return fmt.Errorf("commit %s of group %q: %s: %w", tp, group, hint, kerr)
	}
	return fmt.Errorf("commit %s of group %q: %w", tp, group, kerr)
}

// GroupCommits is the commits of one group, for CommitMany.
type GroupCommits struct {
	Group   string
	Commits []migrate.Commit
}

// GroupResult is the outcome of one group of CommitMany, as Commit returns it.
type GroupResult struct {
	Group   string
	Results []migrate.CommitError
	Err     error
}

// CommitMany commits many groups, Parallel at a time. One group's failure does not stop the
// others; when ctx ends, groups not started yet fail with ctx's error. Results are in order.
func (c *Client) CommitMany(ctx context.Context, batch []GroupCommits) []GroupResult {
	out := make([]GroupResult, len(batch))
	sem := make(chan struct{}, c.cfg.Parallel)
	var wg sync.WaitGroup
	for i, gc := range batch {
		out[i].Group = gc.Group
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil {
			out[i].Results, out[i].Err = notStarted(gc, err)
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i].Results, out[i].Err = c.Commit(ctx, gc.Group, gc.Commits)
		})
	}
	wg.Wait()
	return out
}

func notStarted(gc GroupCommits, err error) ([]migrate.CommitError, error) {
	err = fmt.Errorf("commit group %q: not started: %w", gc.Group, err)
	res := make([]migrate.CommitError, len(gc.Commits))
	for i, cm := range gc.Commits {
		res[i] = migrate.CommitError{TopicPartition: cm.TopicPartition, Err: err}
	}
	return res, err
}
