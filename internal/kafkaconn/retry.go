package kafkaconn

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v5"
)

// ErrThrottled is a response the broker sent empty because the client is over a quota
// (KIP-219: the broker answers at once and mutes the connection for the throttle time).
// It is retriable: the same request succeeds once the throttle time has passed.
var ErrThrottled = errors.New("request throttled by the broker")

// Permanent marks err as one no retry can cure although it wraps an error Retriable accepts:
// corrupt data that failed to decode with io.ErrUnexpectedEOF, or records deleted under a
// read. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

type permanent struct{ err error }

func (e permanent) Error() string { return e.err.Error() }
func (e permanent) Unwrap() error { return e.err }

// Retriable reports whether another attempt of the request that failed with err may succeed,
// after the refresh the error calls for: coordinator errors want a fresh FindCoordinator,
// leadership and metadata errors fresh metadata, the others only time (a timeout, a full
// replica set, a broken connection). Both adapters retry only idempotent requests (a commit
// writes the same offset again, reads read again), so a retry is never harmful, only slow.
//
// Deliberately not retriable: context ends and a closed client (the caller gave up); errors
// that say the group is active (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
// although Kafka's clients retry them inside a membership, an admin commit has none and is
// refused until the group is Empty); authorization, size and version refusals; anything
// marked Permanent; and every error this function does not know.
func Retriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, sarama.ErrClosedClient) {
		return false
	}
	var perm permanent
	if errors.As(err, &perm) {
		return false
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return retriableKError(kerr)
	}
	return errors.Is(err, ErrThrottled) ||
		// sarama's own: no connection, no broker left to try, a short answer.
		errors.Is(err, sarama.ErrNotConnected) || errors.Is(err, sarama.ErrOutOfBrokers) ||
		errors.Is(err, sarama.ErrBrokerNotFound) || errors.Is(err, sarama.ErrIncompleteResponse) ||
		// The connection broke under the request: another broker or a new connection may answer.
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || IsNetError(err)
}

// retriableKError is the one list of Kafka error codes worth another attempt, for every
// request the adapters send. The codes are those Kafka's protocol marks retriable that
// OffsetCommit, OffsetFetch, FindCoordinator, DescribeGroups, Metadata, ListOffsets, Fetch,
// DescribeConfigs or CreateTopics can return. Where the two adapters' former lists differed,
// the decision is written at the code.
func retriableKError(kerr sarama.KError) bool {
	switch kerr {
	// The coordinator moved, is not elected yet, or is still loading the group's offsets:
	// FindCoordinator again, then retry. A reader of __consumer_offsets never meets them.
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable,
		sarama.ErrOffsetsLoadInProgress:
		return true
	// Leadership moved or is being elected: fresh metadata names the new leader.
	case sarama.ErrLeaderNotAvailable, sarama.ErrNotLeaderForPartition, sarama.ErrUnknownLeaderEpoch,
		sarama.ErrFencedLeaderEpoch, sarama.ErrReplicaNotAvailable, sarama.ErrBrokerNotAvailable,
		sarama.ErrOffsetNotAvailable:
		return true
	// UNKNOWN_TOPIC_OR_PARTITION: the broker that answered has no such partition in its
	// metadata. Kafka marks it retriable (an InvalidMetadataException) because it most often
	// means that broker's metadata lags: a topic just created, a partition just moved, or
	// __consumer_offsets created by the first FindCoordinator a moment ago. It also means a
	// topic that is really gone, which no retry cures; only fresh metadata tells the two apart,
	// so it is retriable here and every caller that retries it re-reads metadata first:
	// kafkawriter.Topics describes a topic that Metadata reports unknown as absent (one more
	// round, not the whole budget), and offsetlog refreshes __consumer_offsets' metadata
	// before each attempt (the topic cannot be deleted; its absence is ErrNoOffsetsTopic,
	// found from metadata before any fetch). A commit is the exception its caller makes:
	// kafkawriter returns the partition's error to the core at once (migrate.ErrPartitionMissing:
	// copy and restore report the partition failed; dual-commit's flush checks Kafka's metadata
	// before leaving it), rather than spend the group's retry budget on every offset left
	// behind by a deleted topic.
	case sarama.ErrUnknownTopicOrPartition:
		return true
	// NOT_CONTROLLER: an admin request reached a broker that is not (or no longer) the
	// controller, during a controller election. Kafka marks it retriable; metadata names the new
	// controller. Only kafkawriter's CreateTopics can meet it (sarama's admin retries it first);
	// no read of either adapter goes to the controller, so listing it costs them nothing.
	case sarama.ErrNotController:
		return true
	// NOT_ENOUGH_REPLICAS(_AFTER_APPEND): a write with acks=all found fewer in-sync replicas
	// than min.insync.replicas. Kafka marks both retriable: the ISR recovers when the follower
	// catches up. An offset commit is such a write to __consumer_offsets; coordinators map the
	// code to COORDINATOR_NOT_AVAILABLE, but retrying it as sent is right where one does not.
	// Reads (offsetlog's Fetch and ListOffsets) never get it, so listing it costs them nothing.
	case sarama.ErrNotEnoughReplicas, sarama.ErrNotEnoughReplicasAfterAppend:
		return true
	// The broker timed out, lost a connection to another broker, or a log directory failed
	// (the partition moves to another directory or replica).
	case sarama.ErrRequestTimedOut, sarama.ErrNetworkException, sarama.ErrKafkaStorageError:
		return true
	}
	return false
}

// IsNetError reports a failure of the network itself (dial, read, write, timeout).
func IsNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// Retry runs op until it succeeds, returns an error Retriable rejects, ctx ends or d passes
// without a success; it then returns the error that ended it. op gets the number of the attempt (0 first) to refresh what the last
// error called for before trying again. Waits grow from 100 ms to 2 s: short enough to follow
// a leader election, long enough not to hammer a loading coordinator.
func Retry(ctx context.Context, log *slog.Logger, what string, d time.Duration, op func(attempt int) error) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	attempt := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := op(attempt)
		attempt++
		if err != nil && !Retriable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(newBackOff()), backoff.WithMaxElapsedTime(d),
		backoff.WithNotify(func(err error, wait time.Duration) {
			log.Debug("kafka retry", "op", what, "err", err, "in", wait)
		}))
	return err
}

func newBackOff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 2 * time.Second
	return b
}
