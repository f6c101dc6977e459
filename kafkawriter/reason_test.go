package kafkawriter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestFailureReason(t *testing.T) {
	tp := migrate.TopicPartition{Topic: "t", Partition: 1}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"broker down: connection refused", fmt.Errorf("read 3 kafka groups: %w", refused), ReasonUnreachable},
		{"no broker left", fmt.Errorf("find coordinator: %w", sarama.ErrOutOfBrokers), ReasonUnreachable},
		{"not connected", sarama.ErrNotConnected, ReasonUnreachable},
		{"network timeout", fmt.Errorf("commit: %w", timeout), ReasonTimeout},
		{"deadline", fmt.Errorf("commit: %w", context.DeadlineExceeded), ReasonTimeout},
		{"request timed out", partitionError("g", tp, sarama.ErrRequestTimedOut), ReasonTimeout},
		{"not coordinator", partitionError("g", tp, sarama.ErrNotCoordinatorForConsumer), ReasonCoordinator},
		{"coordinator not available", partitionError("g", tp, sarama.ErrConsumerCoordinatorNotAvailable), ReasonCoordinator},
		{"loading", partitionError("g", tp, sarama.ErrOffsetsLoadInProgress), ReasonCoordinator},
		{"not enough replicas", partitionError("g", tp, sarama.ErrNotEnoughReplicas), ReasonRetriable},
		{"unknown topic on commit", partitionError("g", tp, sarama.ErrUnknownTopicOrPartition), ReasonMissing},
		{"group acl", partitionError("g", tp, sarama.ErrGroupAuthorizationFailed), ReasonDenied},
		{"topic acl", partitionError("g", tp, sarama.ErrTopicAuthorizationFailed), ReasonDenied},
		{"too large", partitionError("g", tp, sarama.ErrInvalidCommitOffsetSize), ReasonRejected},
		{"metadata too large", partitionError("g", tp, sarama.ErrOffsetMetadataTooLarge), ReasonRejected},
		{"stopping", fmt.Errorf("commit: %w", context.Canceled), ReasonStopped},
		{"not from kafka", errors.New("no answer for the partition"), ReasonOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FailureReason(tt.err)
			if got != tt.want {
				t.Fatalf("FailureReason(%v) = %q, want %q", tt.err, got, tt.want)
			}
			if tt.err != nil && !slices.Contains(FailureReasons(), got) {
				t.Fatalf("FailureReason(%v) = %q, not in FailureReasons()", tt.err, got)
			}
			// Only a cluster that does not answer is an outage for the mirror: one group's
			// refusal (an ACL, its coordinator moving) is not.
			if want := tt.want == ReasonUnreachable || tt.want == ReasonTimeout; Unreachable(tt.err) != want {
				t.Fatalf("Unreachable(%v) = %v, want %v", tt.err, !want, want)
			}
		})
	}
}
