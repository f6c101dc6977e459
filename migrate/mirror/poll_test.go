package mirror_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// pollLog is a Kafka that records which groups each read of group states and of commits asked.
type pollLog struct {
	migrate.KafkaState
	mu      sync.Mutex
	states  [][]string // ActiveGroups calls
	commits [][]string // Groups calls
}

func (k *pollLog) ActiveGroups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	k.mu.Lock()
	k.states = append(k.states, slices.Sorted(slices.Values(groups)))
	k.mu.Unlock()
	return k.KafkaState.ActiveGroups(ctx, groups)
}

func (k *pollLog) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	k.mu.Lock()
	k.commits = append(k.commits, slices.Sorted(slices.Values(groups)))
	k.mu.Unlock()
	return k.KafkaState.Groups(ctx, groups)
}

// reset forgets what was asked so far.
func (k *pollLog) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.states, k.commits = nil, nil
}

// TestPollReadsCommitsOfHotGroupsOnly: between syncs the poll asks which of every group are
// active, and reads the commits only of the groups whose Kafka commits can change without a ZooKeeper change:
// kafka-primary, switching, active in Kafka (a member joined since the last sync included), and
// every group under Reverse. A zk-primary group nobody consumes from Kafka costs one state
// read per poll, not a fetch of all its offsets. On synctest's clock: the polls have run to
// their end when the reads are looked at.
func TestPollReadsCommitsOfHotGroupsOnly(t *testing.T) {
	cases := []struct {
		name    string
		reverse bool
		want    []string
	}{
		{name: "forward", want: []string{"joining", "kafka-primary", "switching"}},
		{name: "reverse", reverse: true, want: []string{"idle", "joining", "kafka-primary", "switching"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture()
				k := &pollLog{KafkaState: f.kafka}
				f.m.Kafka, f.m.Reverse = k, tc.reverse
				f.m.PollInterval = time.Minute
				f.m.KeepaliveInterval = time.Hour // no keep-alive syncs among the polls
				for _, g := range []string{"idle", "joining", "kafka-primary", "switching"} {
					f.legacy.SetOffset(g, "t", 0, 10)
				}
				f.legacy.SetLive("switching", "ids/c1")
				f.kafka.SetCommitted("switching", "t", 0, 12) // Kafka ahead, legacy consumers alive
				f.kafka.SetCommitted("kafka-primary", "t", 0, 12)
				f.kafka.SetGroup("kafka-primary", "Stable", 1)
				f.start(t)
				time.Sleep(30 * time.Second) // the start settles: first syncs, the watcher armed
				synctest.Wait()
				f.kafka.SetGroup("joining", "Stable", 1) // a Kafka consumer joins a zk-primary group
				k.reset()

				time.Sleep(time.Minute) // one poll
				synctest.Wait()
				k.mu.Lock()
				defer k.mu.Unlock()
				all := []string{"idle", "joining", "kafka-primary", "switching"}
				if len(k.states) != 1 || !slices.Equal(k.states[0], all) {
					t.Errorf("state reads %v, want one of every group %v", k.states, all)
				}
				if len(k.commits) == 0 || !slices.Equal(k.commits[0], tc.want) {
					t.Errorf("commit reads %v, want the poll's first to ask %v", k.commits, tc.want)
				}
			})
		})
	}
}
