package kafkawriter

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// ErrGroupActive marks a commit the coordinator refused because the group has live members
// (or is rebalancing): an admin commit (generation -1, no member id) is only accepted for an
// absent or Empty group. It is the core's migrate.ErrGroupActive, so the core can test for it
// without importing this package; errors wrapping it also wrap the broker's sarama.KError.
var ErrGroupActive = migrate.ErrGroupActive

// Kafka error codes newer than sarama's named KErrors (KIP-848 consumer groups, Kafka 3.7+).
const (
	errFencedMemberEpoch sarama.KError = 110 // FENCED_MEMBER_EPOCH
	errStaleMemberEpoch  sarama.KError = 113 // STALE_MEMBER_EPOCH
)

// IsGroupActive reports whether err says the group has live members in Kafka, so an admin
// commit was (and will be) refused until the group is Empty.
func IsGroupActive(err error) bool {
	if errors.Is(err, ErrGroupActive) {
		return true
	}
	var kerr sarama.KError
	return errors.As(err, &kerr) && groupActiveKError(kerr)
}

func groupActiveKError(kerr sarama.KError) bool {
	switch kerr {
	case sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration, sarama.ErrRebalanceInProgress,
		errFencedMemberEpoch, errStaleMemberEpoch:
		return true
	}
	return false
}

// coordinatorError reports errors that mean "ask FindCoordinator again, then retry".
func coordinatorError(err error) bool {
	return errors.Is(err, sarama.ErrNotCoordinatorForConsumer) ||
		errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) ||
		errors.Is(err, sarama.ErrOffsetsLoadInProgress)
}

// retriable reports errors worth another attempt after a coordinator or metadata refresh:
// coordinator moves and loads, leadership changes, timeouts and broken connections. Requests
// retried after them are idempotent (a commit writes the same offset again).
func retriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, sarama.ErrClosedClient) {
		return false
	}
	if coordinatorError(err) {
		return true
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		switch kerr {
		case sarama.ErrRequestTimedOut, sarama.ErrNetworkException, sarama.ErrLeaderNotAvailable,
			sarama.ErrNotLeaderForPartition, sarama.ErrUnknownLeaderEpoch, sarama.ErrFencedLeaderEpoch,
			sarama.ErrNotEnoughReplicas, sarama.ErrNotEnoughReplicasAfterAppend, sarama.ErrBrokerNotAvailable,
			sarama.ErrReplicaNotAvailable, sarama.ErrOffsetNotAvailable, sarama.ErrKafkaStorageError:
			return true
		}
		return false
	}
	return errors.Is(err, sarama.ErrNotConnected) || errors.Is(err, sarama.ErrOutOfBrokers) ||
		errors.Is(err, sarama.ErrBrokerNotFound) || errors.Is(err, sarama.ErrIncompleteResponse) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || isNetError(err)
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// kerrOrNil turns sarama's "no error" code into a nil error.
func kerrOrNil(k sarama.KError) error {
	if k == sarama.ErrNoError {
		return nil
	}
	return k
}

// Call runs f, a blocking sarama call that takes no context, and returns early when ctx ends.
// f keeps running in its goroutine until sarama's own timeouts end it; its result is dropped.
func Call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// authorizationHint names an ACL refusal the way Kafka's docs and broker logs do, and says
// which permission is missing: sarama's own text ("not authorized to access this group")
// names neither. "" for any other error.
func authorizationHint(k sarama.KError) string {
	switch k {
	case sarama.ErrGroupAuthorizationFailed:
		return "GROUP_AUTHORIZATION_FAILED (the Kafka user lacks the ACL: READ on the group to commit, DESCRIBE to read)"
	case sarama.ErrTopicAuthorizationFailed:
		return "TOPIC_AUTHORIZATION_FAILED (the Kafka user lacks the ACL: READ on the topic to commit, DESCRIBE to read)"
	case sarama.ErrClusterAuthorizationFailed:
		return "CLUSTER_AUTHORIZATION_FAILED (the Kafka user lacks an ACL on the cluster)"
	}
	return ""
}

// authPrefix is authorizationHint(err) followed by ": " when err is an ACL refusal, else "".
func authPrefix(err error) string {
	var k sarama.KError
	if errors.As(err, &k) {
		if h := authorizationHint(k); h != "" {
			return h + ": "
		}
	}
	return ""
}
