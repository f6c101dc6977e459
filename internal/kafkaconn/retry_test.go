package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// retriableCodes is the reconciled list, written out independently of retriableKError so that
// adding or dropping a code there fails TestRetriableCodes until this list agrees.
var retriableCodes = map[sarama.KError]string{
	sarama.ErrNotCoordinatorForConsumer:       "NOT_COORDINATOR",
	sarama.ErrConsumerCoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE",
	sarama.ErrOffsetsLoadInProgress:           "COORDINATOR_LOAD_IN_PROGRESS",
	sarama.ErrLeaderNotAvailable:              "LEADER_NOT_AVAILABLE",
	sarama.ErrNotLeaderForPartition:           "NOT_LEADER_OR_FOLLOWER",
	sarama.ErrUnknownLeaderEpoch:              "UNKNOWN_LEADER_EPOCH",
	sarama.ErrFencedLeaderEpoch:               "FENCED_LEADER_EPOCH",
	sarama.ErrReplicaNotAvailable:             "REPLICA_NOT_AVAILABLE",
	sarama.ErrBrokerNotAvailable:              "BROKER_NOT_AVAILABLE",
	sarama.ErrOffsetNotAvailable:              "OFFSET_NOT_AVAILABLE",
	sarama.ErrUnknownTopicOrPartition:         "UNKNOWN_TOPIC_OR_PARTITION (was offsetlog's only)",
	sarama.ErrNotController:                   "NOT_CONTROLLER (was offsetlog's only)",
	sarama.ErrNotEnoughReplicas:               "NOT_ENOUGH_REPLICAS (was kafkawriter's only)",
	sarama.ErrNotEnoughReplicasAfterAppend:    "NOT_ENOUGH_REPLICAS_AFTER_APPEND (was kafkawriter's only)",
	sarama.ErrRequestTimedOut:                 "REQUEST_TIMED_OUT",
	sarama.ErrNetworkException:                "NETWORK_EXCEPTION",
	sarama.ErrKafkaStorageError:               "KAFKA_STORAGE_ERROR",
}

// TestRetriableCodes checks every Kafka error code sarama names, bare and wrapped twice as the
// adapters wrap them: the listed ones are retriable, every other one is not.
func TestRetriableCodes(t *testing.T) {
	for code := sarama.KError(-1); code <= 130; code++ {
		_, want := retriableCodes[code]
		name := fmt.Sprintf("%d %s", code, code.Error())
		t.Run(name, func(t *testing.T) {
			wrapped := fmt.Errorf("commit t/0 of group %q: %w", "g", fmt.Errorf("on coordinator 1: %w", code))
			if code == sarama.ErrNoError {
				want = false // kerrOrNil turns it into nil before anyone asks; as an error it is not a failure to retry
			}
			if got := Retriable(code); got != want {
				t.Errorf("Retriable(%s) = %v, want %v", name, got, want)
			}
			if got := Retriable(wrapped); got != want {
				t.Errorf("Retriable(wrapped %s) = %v, want %v", name, got, want)
			}
			if Retriable(Permanent(wrapped)) {
				t.Errorf("Retriable(Permanent(%s)) = true", name)
			}
		})
	}
}

func TestRetriable(t *testing.T) {
	opErr := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain error", errors.New("boom"), false},
		{"out of brokers", sarama.ErrOutOfBrokers, true},
		{"out of brokers, wrapped", fmt.Errorf("find coordinator: %w", sarama.ErrOutOfBrokers), true},
		{"not connected", sarama.ErrNotConnected, true},
		{"broker not found", sarama.ErrBrokerNotFound, true},
		{"incomplete response", fmt.Errorf("x: %w", sarama.ErrIncompleteResponse), true},
		{"closed client", fmt.Errorf("x: %w", sarama.ErrClosedClient), false},
		{"eof", fmt.Errorf("read: %w", io.EOF), true},
		{"unexpected eof", io.ErrUnexpectedEOF, true},
		{"closed connection", fmt.Errorf("write: %w", net.ErrClosed), true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"connection refused", syscall.ECONNREFUSED, true},
		{"broken pipe", syscall.EPIPE, true},
		{"net.OpError", fmt.Errorf("fetch: %w", opErr), true},
		{"dial timeout", timeout, true},
		{"throttled", fmt.Errorf("fetch p0: %w", ErrThrottled), true},
		{"canceled", context.Canceled, false},
		{"canceled, wrapped", fmt.Errorf("commit: %w", context.Canceled), false},
		{"deadline", fmt.Errorf("commit: %w", context.DeadlineExceeded), false},
		// A network error that carries the context's end is the caller giving up, not the net.
		{"dial cut by the context", &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}, false},
		{"permanent eof (corrupt batch)", fmt.Errorf("decode: %w", Permanent(io.ErrUnexpectedEOF)), false},
		{"permanent nil", Permanent(nil), false},
		{"group active", sarama.ErrUnknownMemberId, false},
		{"rebalancing", sarama.ErrRebalanceInProgress, false},
		{"group acl", sarama.ErrGroupAuthorizationFailed, false},
		{"commit too large", sarama.ErrInvalidCommitOffsetSize, false},
		{"offset out of range", sarama.ErrOffsetOutOfRange, false},
		{"sasl refused", sarama.ErrSASLAuthenticationFailed, false},
		{"joined: first retriable", errors.Join(sarama.ErrRequestTimedOut, errors.New("boom")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retriable(tt.err); got != tt.want {
				t.Fatalf("Retriable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		errs     []error // op's result per attempt; past the end: nil
		budget   time.Duration
		want     error
		attempts int
	}{
		{"first try", nil, time.Second, nil, 1},
		{"retriable then success", []error{sarama.ErrRequestTimedOut, io.EOF}, 10 * time.Second, nil, 3},
		{"fatal stops at once", []error{boom}, 10 * time.Second, boom, 1},
		{"retriable then fatal", []error{sarama.ErrNotLeaderForPartition, sarama.ErrTopicAuthorizationFailed}, 10 * time.Second, sarama.ErrTopicAuthorizationFailed, 2},
		{"permanent stops at once", []error{Permanent(io.ErrUnexpectedEOF)}, 10 * time.Second, io.ErrUnexpectedEOF, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []int
			err := Retry(context.Background(), nil, "test", tt.budget, func(attempt int) error {
				seen = append(seen, attempt)
				if attempt < len(tt.errs) {
					return tt.errs[attempt]
				}
				return nil
			})
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("Retry = %v, want %v", err, tt.want)
			}
			if len(seen) != tt.attempts || seen[len(seen)-1] != tt.attempts-1 {
				t.Errorf("attempts %v, want %d numbered from 0", seen, tt.attempts)
			}
		})
	}
}

func TestRetryGivesUpAfterBudget(t *testing.T) {
	start := time.Now()
	err := Retry(context.Background(), nil, "test", 300*time.Millisecond, func(int) error { return sarama.ErrOffsetsLoadInProgress })
	if !errors.Is(err, sarama.ErrOffsetsLoadInProgress) {
		t.Fatalf("Retry = %v, want the last retriable error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %s, budget 300ms", d)
	}
}
