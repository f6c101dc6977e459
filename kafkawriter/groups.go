package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// describeGroupsChunk bounds the groups of one DescribeGroups request.
const describeGroupsChunk = 500

// Committed is one committed offset as the coordinator returns it.
type Committed struct {
	Offset      int64
	LeaderEpoch int32 // -1 when the commit carried none
	Metadata    string
}

// Groups implements migrate.KafkaState: the coordinator's state and member count of each
// group (DescribeGroups, one request per coordinator) and its committed offsets
// (FetchCommittedMany: many groups per OffsetFetch on Kafka 3.0+, one per group before).
//
// The two reads run at once: each is a round trip to the coordinators, and copy makes three
// such reads per batch on its critical path. Neither answer is a snapshot of the other's
// moment whichever goes first, so the order gave no guarantee to lose: a group that becomes
// active after its DescribeGroups answer is refused admin commits by the coordinator itself.
func (c *Client) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	names := uniqueSorted(groups)
	var (
		states    map[string]migrate.GroupState
		committed map[string]map[migrate.TopicPartition]Committed
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		states, err = c.describeGroups(gctx, names)
		return err
	})
	g.Go(func() (err error) {
		committed, err = c.FetchCommittedMany(gctx, names)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, g := range names {
		offsets := make(map[migrate.TopicPartition]int64, len(committed[g]))
		var meta map[migrate.TopicPartition]string
		for tp, co := range committed[g] {
			offsets[tp] = co.Offset
			if co.Metadata != "" {
				if meta == nil {
					meta = map[migrate.TopicPartition]string{}
				}
				meta[tp] = co.Metadata
			}
		}
		s := states[g]
		s.Committed, s.Metadata = offsets, meta
		states[g] = s
	}
	return states, nil
}

// describeGroups finds each group's coordinator and asks each coordinator once about all its
// groups; groups answered with a coordinator error are retried after FindCoordinator.
func (c *Client) describeGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	out := make(map[string]migrate.GroupState, len(groups))
	todo := groups
	err := c.retry(ctx, "describe groups", func(attempt int) error {
		var (
			mu      sync.Mutex
			byCoord = make(map[int32][]string)
			brokers = make(map[int32]*sarama.Broker)
		)
		ask := todo
		if attempt == 0 { // a retry asks FindCoordinator for every group left
			var known map[*sarama.Broker][]string
			known, ask = c.leaders(ctx, todo)
			for b, gs := range known {
				byCoord[b.ID()] = append(byCoord[b.ID()], gs...)
				brokers[b.ID()] = b
			}
		}
		err := forEach(ctx, c.cfg.Parallel, ask, func(ctx context.Context, g string) error {
			b, err := c.coordinator(ctx, g, attempt > 0)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			byCoord[b.ID()] = append(byCoord[b.ID()], g)
			brokers[b.ID()] = b
			return nil
		})
		if err != nil {
			return err
		}
		type job struct {
			b      *sarama.Broker
			groups []string
		}
		var jobs []job
		for id, gs := range byCoord {
			for part := range slices.Chunk(gs, describeGroupsChunk) {
				jobs = append(jobs, job{brokers[id], part})
			}
		}
		var retryErr error
		err = forEach(ctx, c.cfg.Parallel, jobs, func(ctx context.Context, j job) error {
			states, errs, err := c.describeOn(ctx, j.b, j.groups)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if !kafkaconn.Retriable(err) {
					return err
				}
				retryErr = err
				return nil
			}
			for g, s := range states {
				out[g] = s
			}
			for _, gerr := range errs {
				if !kafkaconn.Retriable(gerr) {
					return gerr
				}
				retryErr = gerr
			}
			return nil
		})
		if err != nil {
			return err
		}
		todo = slices.DeleteFunc(slices.Clone(todo), func(g string) bool { _, ok := out[g]; return ok })
		if len(todo) > 0 && retryErr == nil {
			retryErr = fmt.Errorf("describe group %q: %w", todo[0], sarama.ErrIncompleteResponse)
		}
		return retryErr
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// describeOn sends one DescribeGroups to a coordinator. Groups the classic protocol reports
// as Dead are asked about again with ConsumerGroupDescribe: a KIP-848 consumer group (Kafka
// 4.x) is invisible to DescribeGroups v0-v5, which calls it Dead even with live members.
func (c *Client) describeOn(ctx context.Context, b *sarama.Broker, groups []string) (map[string]migrate.GroupState, []error, error) {
	req := &sarama.DescribeGroupsRequest{Groups: groups, Version: describeGroupsVersion(c.version)}
	resp, err := kafkaconn.Call(ctx, func() (*sarama.DescribeGroupsResponse, error) { return b.DescribeGroups(req) })
	if err != nil {
		return nil, nil, fmt.Errorf("describe %d groups on coordinator %d (%s): %w", len(groups), b.ID(), b.Addr(), err)
	}
	states := make(map[string]migrate.GroupState, len(groups))
	var dead []string
	var gerrs []error
	for _, d := range resp.Groups {
		switch d.Err {
		case sarama.ErrNoError:
		case sarama.ErrGroupIDNotFound:
			dead = append(dead, d.GroupId)
			continue
		default:
			gerrs = append(gerrs, fmt.Errorf("describe group %q: %s%w", d.GroupId, authPrefix(d.Err), d.Err))
			continue
		}
		if d.State == "Dead" && len(d.Members) == 0 {
			dead = append(dead, d.GroupId)
			continue
		}
		states[d.GroupId] = migrate.GroupState{State: d.State, Members: len(d.Members)}
	}
	if len(dead) == 0 {
		return states, gerrs, nil
	}
	modern, err := c.describeConsumerGroups(ctx, b, dead)
	if err != nil {
		return nil, nil, err
	}
	for _, g := range dead {
		states[g] = modern[g] // the zero GroupState: the group does not exist
	}
	return states, gerrs, nil
}

// describeGroupsVersion is the DescribeGroups version of each release line. v0-v2 differ only
// in the response's throttle time; none of the versions this package sends asks for authorized
// operations (v3+, KIP-430), so nothing is given up before 2.3.
func describeGroupsVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_4_0_0):
		return 5
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 1
	default:
		return 0
	}
}

// describeConsumerGroups asks about KIP-848 groups. Brokers without the new group coordinator
// (ZooKeeper mode, or before 3.7) answer "unsupported" or "not found": both mean no such group.
func (c *Client) describeConsumerGroups(ctx context.Context, b *sarama.Broker, groups []string) (map[string]migrate.GroupState, error) {
	out := make(map[string]migrate.GroupState)
	if !c.version.IsAtLeast(sarama.V3_7_0_0) {
		return out, nil
	}
	req := sarama.NewConsumerGroupDescribeRequest(c.version)
	req.GroupIDs = groups
	resp, err := kafkaconn.Call(ctx, func() (*sarama.ConsumerGroupDescribeResponse, error) { return b.ConsumerGroupDescribe(req) })
	if errors.Is(err, sarama.ErrUnsupportedVersion) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe %d consumer groups on coordinator %d (%s): %w", len(groups), b.ID(), b.Addr(), err)
	}
	for _, d := range resp.Groups {
		switch d.ErrorCode {
		case sarama.ErrNoError:
			if d.GroupState != "" && d.GroupState != "Dead" && d.GroupState != "dead" {
				out[d.GroupID] = migrate.GroupState{State: d.GroupState, Members: len(d.Members)}
			}
		case sarama.ErrGroupIDNotFound, sarama.ErrUnsupportedVersion, sarama.ErrInvalidRequest:
			// not a consumer group (or no new coordinator): the classic answer stands
		default:
			return nil, fmt.Errorf("describe consumer group %q: %w", d.GroupID, d.ErrorCode)
		}
	}
	return out, nil
}

// FetchCommitted returns every committed offset of a group (OffsetFetch with all partitions),
// with its leader epoch and metadata. Partitions without a commit (offset -1) are absent.
// Coordinator errors are retried after FindCoordinator, up to RetryTimeout.
func (c *Client) FetchCommitted(ctx context.Context, group string) (map[migrate.TopicPartition]Committed, error) {
	var out map[migrate.TopicPartition]Committed
	err := c.retry(ctx, "fetch offsets", func(attempt int) error {
		b, err := c.coordinator(ctx, group, attempt > 0)
		if err != nil {
			return err
		}
		req := sarama.NewOffsetFetchRequest(c.version, group, nil) // nil: all partitions (v2+)
		resp, err := kafkaconn.Call(ctx, func() (*sarama.OffsetFetchResponse, error) { return b.FetchOffset(req) })
		if err != nil {
			return fmt.Errorf("fetch offsets of group %q from coordinator %d (%s): %w", group, b.ID(), b.Addr(), err)
		}
		blocks := resp.Blocks
		if resp.Version >= 8 {
			g := resp.GetGroup(group)
			if g == nil {
				return fmt.Errorf("fetch offsets of group %q: %w", group, sarama.ErrIncompleteResponse)
			}
			if g.Err != sarama.ErrNoError {
				return fmt.Errorf("fetch offsets of group %q: %s%w", group, authPrefix(g.Err), g.Err)
			}
			blocks = g.Blocks
		} else if resp.Err != sarama.ErrNoError {
			return fmt.Errorf("fetch offsets of group %q: %s%w", group, authPrefix(resp.Err), resp.Err)
		}
		out, err = committedFrom(group, blocks)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
