package migrate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// topicsSpy wraps a KafkaState: it records every Topics call, can answer wrongly, and signals
// the first call.
type topicsSpy struct {
	migrate.KafkaState
	mu     sync.Mutex
	calls  [][]string
	asked  chan struct{} // closed at the first call
	once   sync.Once
	answer func(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) // nil: the store's
}

func newTopicsSpy(k migrate.KafkaState) *topicsSpy {
	return &topicsSpy{KafkaState: k, asked: make(chan struct{})}
}

func (s *topicsSpy) Topics(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	s.mu.Lock()
	s.calls = append(s.calls, slices.Clone(topics))
	s.mu.Unlock()
	s.once.Do(func() { close(s.asked) })
	if s.answer != nil {
		return s.answer(ctx, topics)
	}
	return s.KafkaState.Topics(ctx, topics)
}

// holdAfterFirst wraps a LegacyStore: its first ReadGroups (the first chunk) hands over one
// group, then waits for release (or gives up after a while) before the rest.
type holdAfterFirst struct {
	migrate.LegacyStore
	release <-chan struct{}
	reads   int
	waited  bool // release came before the first read went on
}

func (h *holdAfterFirst) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	h.reads++
	first := h.reads == 1
	return h.LegacyStore.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
		if err := emit(g); err != nil {
			return err
		}
		if first {
			first = false
			select {
			case <-h.release:
				h.waited = true
			case <-time.After(5 * time.Second):
			}
		}
		return nil
	})
}

// TestPlannerDescribesTopicsWhileReading: the topics of a chunk are described as soon as a group
// read names them, not after the chunk's last group; each topic is asked once in the whole
// plan (the cache spans chunks), never in an empty request; the plan is unchanged.
func TestPlannerDescribesTopicsWhileReading(t *testing.T) {
	legacy, kafka := manyGroups(11)
	in, err := migrate.ReadInputs(t.Context(), legacy, kafka, migrate.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := migratetest.MustBuild(t, in, migrate.DefaultPolicy())

	spy := newTopicsSpy(kafka)
	held := &holdAfterFirst{LegacyStore: legacy, release: spy.asked}
	pl := &migrate.Planner{Legacy: held, Kafka: spy, Policy: migrate.DefaultPolicy(), ChunkGroups: 4}
	tail, err := pl.Stream(t.Context(), migratetest.Now, &collectSink{})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if tail.Fingerprint != want.Fingerprint {
		t.Errorf("fingerprint %s, Build's %s", tail.Fingerprint, want.Fingerprint)
	}
	if !held.waited {
		t.Error("no topic was described while the first chunk was still being read")
	}
	seen := map[string]bool{}
	for _, call := range spy.calls {
		if len(call) == 0 {
			t.Errorf("a Topics call without topics (that means all topics): %v", spy.calls)
		}
		for _, topic := range call {
			if seen[topic] {
				t.Errorf("topic %q described twice: %v", topic, spy.calls)
			}
			seen[topic] = true
		}
	}
	for topic := range in.Topics {
		if !seen[topic] {
			t.Errorf("topic %q never described: %v", topic, spy.calls)
		}
	}
}

// TestPlannerTopicsFailure: a description that fails or leaves a topic out ends the plan with
// an error naming it, and no tail.
func TestPlannerTopicsFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error)
		want   string
	}{
		{"kafka error", func(context.Context, []string) (map[string]migrate.TopicInfo, error) {
			return nil, errors.New("broker gone")
		}, "topics in kafka: broker gone"},
		{"topic left out", func(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
			return map[string]migrate.TopicInfo{}, nil
		}, "in kafka: no answer for it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := manyGroups(9)
			spy := newTopicsSpy(kafka)
			spy.answer = tc.answer
			pl := &migrate.Planner{Legacy: legacy, Kafka: spy, Policy: migrate.DefaultPolicy(), ChunkGroups: 4}
			tail, err := pl.Stream(t.Context(), migratetest.Now, &collectSink{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || tail.Fingerprint != "" {
				t.Fatalf("Stream = %+v, %v; want an error with %q and no tail", tail, err, tc.want)
			}
		})
	}
}
