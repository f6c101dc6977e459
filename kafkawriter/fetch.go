package kafkawriter

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// fetchGroupsChunk bounds the groups of one multi-group OffsetFetch. A migration's groups have
// tens to hundreds of partitions each: 100 groups keep a response to a few hundred KiB and
// still leave several requests per coordinator to run in parallel.
const fetchGroupsChunk = 100

// multiGroupFetch reports whether OffsetFetch can carry many groups: v8 (KIP-709, Kafka 3.0).
// Below that every group is its own request.
func (c *Client) multiGroupFetch() bool { return c.version.IsAtLeast(sarama.V3_0_0_0) }

// FetchCommittedMany returns every committed offset of each group, as FetchCommitted does for
// one. With OffsetFetch v8+ the groups of one coordinator (on one connection) go in requests
// of up to fetchGroupsChunk groups; a group answered with an error, a request that failed as a
// whole, or a broker that clamped the request below v8 falls back to FetchCommitted for that
// group, which retries coordinator errors after FindCoordinator. On older brokers every group
// takes that path.
func (c *Client) FetchCommittedMany(ctx context.Context, groups []string) (map[string]map[migrate.TopicPartition]Committed, error) {
	names := uniqueSorted(groups)
	out := make(map[string]map[migrate.TopicPartition]Committed, len(names))
	var mu sync.Mutex
	fallback := names
	if c.multiGroupFetch() && len(names) > 1 {
		var err error
		if fallback, err = c.fetchBatched(ctx, names, out, &mu); err != nil {
			return nil, err
		}
	}
	err := forEach(ctx, c.cfg.Parallel, fallback, func(ctx context.Context, g string) error {
		committed, err := c.FetchCommitted(ctx, g)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out[g] = committed
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, g := range names {
		if _, ok := out[g]; !ok {
			// Never report "no commits" for a group that was not answered: a plan would
			// take it for zk-only and overwrite what Kafka holds.
			return nil, fmt.Errorf("fetch offsets of group %q: %w", g, sarama.ErrIncompleteResponse)
		}
	}
	return out, nil
}

// fetchBatched sends the multi-group requests and fills out; it returns the groups it could not
// answer, for the one-group path.
func (c *Client) fetchBatched(ctx context.Context, names []string, out map[string]map[migrate.TopicPartition]Committed, mu *sync.Mutex) ([]string, error) {
	byCoord, ask := c.leaders(ctx, names)
	var retry []string
	err := forEach(ctx, c.cfg.Parallel, ask, func(ctx context.Context, g string) error {
		b, err := c.coordinator(ctx, g, false)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			byCoord[b] = append(byCoord[b], g)
		case kafkaconn.Retriable(err):
			retry = append(retry, g) // FetchCommitted looks again, with backoff
		default:
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	type job struct {
		b      *sarama.Broker
		groups []string
	}
	var jobs []job
	for b, gs := range byCoord {
		for part := range slices.Chunk(gs, fetchGroupsChunk) {
			jobs = append(jobs, job{b, part})
		}
	}
	err = forEach(ctx, c.cfg.Parallel, jobs, func(ctx context.Context, j job) error {
		got, left, err := c.fetchOn(ctx, j.b, j.groups)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for g, co := range got {
			out[g] = co
		}
		retry = append(retry, left...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return retry, nil
}

// fetchOn sends one OffsetFetch v8 for groups to their coordinator b. It returns the groups it
// answered, and the groups to ask again one by one. Only a non-retriable error of one
// partition, or of a group, is an error: a whole-request failure (a dropped connection, an
// encoding refusal after a version clamp) leaves every group to the fallback.
func (c *Client) fetchOn(ctx context.Context, b *sarama.Broker, groups []string) (map[string]map[migrate.TopicPartition]Committed, []string, error) {
	// One request per send: sarama rewrites Version in place when it negotiates.
	req := &sarama.OffsetFetchRequest{Version: 8}
	for _, g := range groups {
		req.Groups = append(req.Groups, sarama.OffsetFetchRequestGroup{GroupId: g}) // nil Partitions: all
	}
	resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetFetchResponse, error) { return b.FetchOffset(req) })
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		c.cfg.Logger.Debug("multi-group offset fetch failed, fetching one group at a time",
			"coordinator", b.ID(), "groups", len(groups), "err", err)
		return nil, groups, nil
	}
	if resp.Version < 8 {
		return nil, groups, nil
	}
	out := make(map[string]map[migrate.TopicPartition]Committed, len(groups))
	var left []string
	for _, g := range groups {
		gr := resp.GetGroup(g)
		switch {
		case gr == nil:
			left = append(left, g)
			continue
		case gr.Err != sarama.ErrNoError:
			if !kafkaconn.Retriable(gr.Err) {
				return nil, nil, fmt.Errorf("fetch offsets of group %q: %s%w", g, authPrefix(gr.Err), gr.Err)
			}
			left = append(left, g)
			continue
		}
		co, err := committedFrom(g, gr.Blocks)
		if err != nil {
			return nil, nil, err
		}
		out[g] = co
	}
	return out, left, nil
}

// committedFrom turns OffsetFetch blocks into committed offsets. Partitions without a commit
// (offset -1) are absent; a partition error fails the group.
func committedFrom(group string, blocks map[string]map[int32]*sarama.OffsetFetchResponseBlock) (map[migrate.TopicPartition]Committed, error) {
	out := make(map[migrate.TopicPartition]Committed)
	for topic, parts := range blocks {
		for p, blk := range parts {
			if blk.Err != sarama.ErrNoError {
				return nil, fmt.Errorf("fetch offset of group %q topic %q partition %d: %s%w", group, topic, p, authPrefix(blk.Err), blk.Err)
			}
			if blk.Offset < 0 {
				continue
			}
			out[migrate.TopicPartition{Topic: topic, Partition: p}] = Committed{Offset: blk.Offset, LeaderEpoch: blk.LeaderEpoch, Metadata: blk.Metadata}
		}
	}
	return out, nil
}
