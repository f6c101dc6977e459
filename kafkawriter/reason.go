package kafkawriter

import (
	"context"
	"errors"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// The reasons FailureReason returns: a small fixed set, so a metric labelled with them keeps a
// bounded number of series. A commit refused because the group is active is not a failure (it
// is a phase change, counted apart) and has no reason here.
const (
	ReasonUnreachable = "unreachable"             // no broker answered: connection refused or broken, no broker left
	ReasonCoordinator = "coordinator-unavailable" // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS
	ReasonTimeout     = "timeout"                 // REQUEST_TIMED_OUT, a deadline or a network timeout
	ReasonRetriable   = "retriable"               // another error Kafka marks retriable (leadership, replicas)
	ReasonMissing     = "partition-missing"       // UNKNOWN_TOPIC_OR_PARTITION on a commit (migrate.ErrPartitionMissing)
	ReasonDenied      = "unauthorized"            // an ACL refused it
	ReasonRejected    = "rejected"                // any other error code: Kafka refused the partition for good
	ReasonStopped     = "stopped"                 // the run was stopping (the context was cancelled)
	ReasonOther       = "other"                   // none of the above (not from Kafka)
)

// FailureReasons lists every reason FailureReason can return.
func FailureReasons() []string {
	return []string{ReasonUnreachable, ReasonCoordinator, ReasonTimeout, ReasonRetriable, ReasonMissing,
		ReasonDenied, ReasonRejected, ReasonStopped, ReasonOther}
}

// FailureReason classifies why a read or write failed, as an operator acts on it: wait for the
// cluster (unreachable, coordinator-unavailable, timeout, retriable), or fix something
// (partition-missing, unauthorized, rejected). err may come from a commit's per-partition
// answer or from a whole request; nil is "".
func FailureReason(err error) string {
	var kerr sarama.KError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, migrate.ErrPartitionMissing):
		return ReasonMissing // it wraps UNKNOWN_TOPIC_OR_PARTITION, which Kafka marks retriable
	case errors.Is(err, context.Canceled):
		return ReasonStopped
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.As(err, &kerr):
		return kerrReason(kerr)
	case kafkaconn.IsNetError(err) && isTimeout(err):
		return ReasonTimeout
	case kafkaconn.Retriable(err):
		return ReasonUnreachable // not a Kafka error code: the connection or the broker list failed
	}
	return ReasonOther
}

func kerrReason(kerr sarama.KError) string {
	switch kerr {
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrOffsetsLoadInProgress:
		return ReasonCoordinator
	case sarama.ErrRequestTimedOut:
		return ReasonTimeout
	case sarama.ErrGroupAuthorizationFailed, sarama.ErrTopicAuthorizationFailed, sarama.ErrClusterAuthorizationFailed:
		return ReasonDenied
	}
	if kafkaconn.Retriable(kerr) {
		return ReasonRetriable
	}
	return ReasonRejected
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// Unreachable reports a failure that means Kafka as a whole does not answer (no broker
// reachable, a timeout), as dual-commit's mirror needs to tell an outage from one group's
// refusal (mirror.Mirror.KafkaUnreachable).
func Unreachable(err error) bool {
	r := FailureReason(err)
	return r == ReasonUnreachable || r == ReasonTimeout
}
