package kafkawriter

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// activeStates are the states of a group that Kafka consumers are in, classic and KIP-848,
// spelled as the brokers name them: the filter of ListGroups v4 (KIP-518, Kafka 2.6).
func activeStates() []string {
	return []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Assigning", "Reconciling", "NotReady"}
}

// ActiveGroups implements migrate.KafkaState. From Kafka 2.6 it is one ListGroups per broker,
// filtered by the broker to the active states, so an idle cluster answers with nothing however
// many groups it holds: dual-commit asks this every poll, and DescribeGroups of 10k groups
// every two seconds was most of its idle work. The listing has no member counts (Members is
// 0; Active holds by the state). Before 2.6 it is DescribeGroups of every group asked.
func (c *Client) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if !c.version.IsAtLeast(sarama.V2_6_0_0) {
		states, err := c.describeGroups(ctx, uniqueSorted(groups))
		if err != nil {
			return nil, err
		}
		maps.DeleteFunc(states, func(_ string, s migrate.GroupState) bool { return !s.Active() })
		return states, nil
	}
	asked := make(map[string]bool, len(groups))
	for _, g := range groups {
		asked[g] = true
	}
	var out map[string]migrate.GroupState
	err := c.retry(ctx, "list active groups", func(int) error {
		var ids []int32
		for _, b := range c.sc.Brokers() {
			ids = append(ids, b.ID())
		}
		if len(ids) == 0 {
			return fmt.Errorf("list active groups: no broker known: %w", sarama.ErrOutOfBrokers)
		}
		var mu sync.Mutex
		out = map[string]migrate.GroupState{}
		return forEach(ctx, c.cfg.Parallel, ids, func(ctx context.Context, id int32) error {
			listed, err := c.listActiveOn(ctx, id)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for g, state := range listed {
				if asked[g] {
					out[g] = migrate.GroupState{State: state}
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listActiveOn lists the active groups broker id coordinates, with their states.
func (c *Client) listActiveOn(ctx context.Context, id int32) (map[string]string, error) {
	b, err := c.broker(ctx, id)
	if err != nil {
		return nil, err
	}
	req := &sarama.ListGroupsRequest{Version: 4, StatesFilter: activeStates()}
	resp, err := kafkaconn.Call(ctx, func() (*sarama.ListGroupsResponse, error) { return b.ListGroups(req) })
	if err == nil && resp.Err != sarama.ErrNoError {
		err = resp.Err
	}
	if err != nil {
		return nil, fmt.Errorf("list active groups on broker %d (%s): %s%w", id, b.Addr(), authPrefix(err), err)
	}
	states := make(map[string]string, len(resp.GroupsData))
	for g, d := range resp.GroupsData {
		states[g] = d.GroupState
	}
	return states, nil
}
