package offsetlog

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v5"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
)

// errThrottled is a fetch the broker answered empty because of a quota (KIP-219).
var errThrottled = errors.New("fetch throttled by the broker")

// retry runs op until it succeeds, fails for good, ctx ends or RetryTimeout passes without a
// success. Before each new attempt it refreshes the metadata of __consumer_offsets, so a moved
// leader is found again. op must keep the progress it made when it fails.
func (r *Reader) retry(ctx context.Context, what string, op func() error) error {
	attempt := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		if attempt > 0 {
			if _, err := kafkawriter.Call(ctx, func() (struct{}, error) { return struct{}{}, r.client.RefreshMetadata(Topic) }); err != nil {
				r.log.Debug("refresh metadata before retry", "topic", Topic, "err", err)
			}
		}
		attempt++
		err := op()
		if err != nil && !retriable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(newBackOff()), backoff.WithMaxElapsedTime(r.retryTimeout),
		backoff.WithNotify(func(err error, d time.Duration) {
			r.log.Debug("kafka retry", "op", what, "err", err, "in", d)
		}))
	return err
}

func newBackOff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 2 * time.Second
	return b
}

// retriable reports errors a metadata refresh and another attempt may cure: leadership moves,
// timeouts, throttling, broken connections. Corrupt data and deleted records are permanent.
func retriable(err error) bool {
	var perm errPermanent
	if err == nil || errors.As(err, &perm) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sarama.ErrClosedClient) {
		return false
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		switch kerr {
		case sarama.ErrRequestTimedOut, sarama.ErrNetworkException, sarama.ErrLeaderNotAvailable,
			sarama.ErrNotLeaderForPartition, sarama.ErrUnknownLeaderEpoch, sarama.ErrFencedLeaderEpoch,
			sarama.ErrBrokerNotAvailable, sarama.ErrReplicaNotAvailable, sarama.ErrOffsetNotAvailable,
			sarama.ErrKafkaStorageError, sarama.ErrUnknownTopicOrPartition, sarama.ErrNotController:
			return true
		}
		return false
	}
	return errors.Is(err, errThrottled) || errors.Is(err, sarama.ErrNotConnected) ||
		errors.Is(err, sarama.ErrOutOfBrokers) || errors.Is(err, sarama.ErrBrokerNotFound) ||
		errors.Is(err, sarama.ErrIncompleteResponse) || errors.Is(err, sarama.ErrLeaderNotAvailable) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || isNetError(err)
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// errPermanent marks an error no retry can cure (corrupt data, deleted records).
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// firstPermanent returns the first error that is not retriable, else the first error.
func firstPermanent(errs []error) error {
	for _, err := range errs {
		if !retriable(err) {
			return err
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}
