package migrate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

var errBrokerGone = errors.New("broker gone")

// misbehavingStore wraps a LegacyStore and breaks its promise in one way.
type misbehavingStore struct {
	migrate.LegacyStore
	mode string // "drop", "twice" or "unasked", about group g005
}

func (m misbehavingStore) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	return m.LegacyStore.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
		if g.Group != "g005" {
			return emit(g)
		}
		switch m.mode {
		case "drop":
			return nil
		case "twice":
			if err := emit(g); err != nil {
				return err
			}
			return emit(g)
		default:
			g.Group = "not-asked"
			return emit(g)
		}
	})
}

// TestPlannerDistrustsStore: a legacy store that skips a group, answers twice for one or
// answers for a group not asked is an error naming the group, whatever chunk it falls in, and
// the plan has no tail.
func TestPlannerDistrustsStore(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"drop", `read legacy group "g005": the store returned nothing for it`},
		{"twice", `legacy store returned group "g005" twice`},
		{"unasked", `legacy store returned group "not-asked", which was not asked for`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			legacy, kafka := manyGroups(11)
			pl := &migrate.Planner{Legacy: misbehavingStore{legacy, tc.mode}, Kafka: kafka, Policy: migrate.DefaultPolicy(), ChunkGroups: 4}
			tail, err := pl.Stream(t.Context(), migratetest.Now, &collectSink{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || tail.Fingerprint != "" {
				t.Fatalf("Stream = %+v, %v; want an error with %q and no tail", tail, err, tc.want)
			}
			if strings.Contains(err.Error(), "emit") {
				t.Errorf("error %q names the store's emit, not the fault", err)
			}
		})
	}
}

// TestPlannerKafkaGroupsFailure: a chunk whose Kafka groups cannot be read ends the plan with an
// error naming the chunk's groups.
func TestPlannerKafkaGroupsFailure(t *testing.T) {
	legacy, kafka := manyGroups(9)
	pl := &migrate.Planner{Legacy: legacy, Kafka: failGroups{kafka}, Policy: migrate.DefaultPolicy(), ChunkGroups: 4}
	tail, err := pl.Stream(t.Context(), migratetest.Now, &collectSink{})
	if err == nil || !strings.Contains(err.Error(), "groups from kafka (g") || !strings.Contains(err.Error(), "broker gone") || tail.Fingerprint != "" {
		t.Fatalf("Stream = %+v, %v; want the Kafka error naming the chunk and no tail", tail, err)
	}
}

// failGroups wraps a KafkaState whose Groups always fails.
type failGroups struct{ migrate.KafkaState }

func (failGroups) Groups(context.Context, []string) (map[string]migrate.GroupState, error) {
	return nil, errBrokerGone
}
