package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestIsGroupActive(t *testing.T) {
	tp := migrate.TopicPartition{Topic: "t", Partition: 1}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unknown member", partitionError("g", tp, sarama.ErrUnknownMemberId), true},
		{"illegal generation", partitionError("g", tp, sarama.ErrIllegalGeneration), true},
		{"rebalancing", partitionError("g", tp, sarama.ErrRebalanceInProgress), true},
		{"stale member epoch (KIP-848)", partitionError("g", tp, errStaleMemberEpoch), true},
		{"bare kerror", sarama.ErrUnknownMemberId, true},
		{"sentinel", fmt.Errorf("x: %w", ErrGroupActive), true},
		{"not coordinator", partitionError("g", tp, sarama.ErrNotCoordinatorForConsumer), false},
		{"too large", partitionError("g", tp, sarama.ErrInvalidCommitOffsetSize), false},
		{"auth", partitionError("g", tp, sarama.ErrGroupAuthorizationFailed), false},
		{"other", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsGroupActive(tt.err); got != tt.want {
				t.Fatalf("IsGroupActive(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestPartitionErrorWraps(t *testing.T) {
	tp := migrate.TopicPartition{Topic: "orders", Partition: 7}
	err := partitionError("billing", tp, sarama.ErrUnknownMemberId)
	if !errors.Is(err, migrate.ErrGroupActive) || !errors.Is(err, sarama.ErrUnknownMemberId) {
		t.Fatalf("%v does not wrap both migrate.ErrGroupActive and the KError", err)
	}
	for _, want := range []string{"orders/7", `"billing"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	err = partitionError("billing", tp, sarama.ErrOffsetMetadataTooLarge)
	if errors.Is(err, ErrGroupActive) || !errors.Is(err, sarama.ErrOffsetMetadataTooLarge) {
		t.Fatalf("%v: wrong wrapping", err)
	}
}

// TestCommitRetriable: a partition's answer to a commit is retried as kafkaconn.Retriable says,
// except UNKNOWN_TOPIC_OR_PARTITION, which goes back to the core at once.
func TestCommitRetriable(t *testing.T) {
	tp := migrate.TopicPartition{Topic: "t", Partition: 1}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"not coordinator", partitionError("g", tp, sarama.ErrNotCoordinatorForConsumer), true},
		{"coordinator loading", partitionError("g", tp, sarama.ErrOffsetsLoadInProgress), true},
		{"not enough replicas", partitionError("g", tp, sarama.ErrNotEnoughReplicas), true},
		{"request timed out", partitionError("g", tp, sarama.ErrRequestTimedOut), true},
		{"unknown topic: to the core", partitionError("g", tp, sarama.ErrUnknownTopicOrPartition), false},
		{"unknown member", partitionError("g", tp, sarama.ErrUnknownMemberId), false},
		{"too large", partitionError("g", tp, sarama.ErrInvalidCommitOffsetSize), false},
		{"metadata too large", partitionError("g", tp, sarama.ErrOffsetMetadataTooLarge), false},
		{"group auth", partitionError("g", tp, sarama.ErrGroupAuthorizationFailed), false},
		{"topic auth", partitionError("g", tp, sarama.ErrTopicAuthorizationFailed), false},
		{"connection broke", fmt.Errorf("commit: %w", io.EOF), true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commitRetriable(tt.err); got != tt.want {
				t.Fatalf("commitRetriable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestCommitValidation(t *testing.T) {
	c := &Client{cfg: Config{}.withDefaults()}
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	if _, err := c.Commit(context.Background(), "g", []migrate.Commit{{TopicPartition: tp, Offset: 1}, {TopicPartition: tp, Offset: 2}}); err == nil {
		t.Fatal("duplicate partition accepted")
	}
	res, err := c.Commit(context.Background(), "g", []migrate.Commit{{TopicPartition: tp, Offset: -1}})
	if err != nil || len(res) != 1 || res[0].TopicPartition != tp || !errors.Is(res[0].Err, ErrNegativeOffset) {
		t.Fatalf("negative offset: %v, %v", res, err)
	}
}

func TestForEachStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	items := []int{1, 2, 3, 4, 5, 6, 7, 8}
	err := forEach(context.Background(), 1, items, func(_ context.Context, i int) error {
		if i == 3 {
			return boom
		}
		if i > 3 {
			t.Errorf("item %d started after the error", i)
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("forEach = %v, want boom", err)
	}
}
