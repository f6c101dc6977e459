package offsetlog

import (
	"context"
	"errors"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// retry runs op under kafkaconn.Retry until it succeeds, fails for good, ctx ends or
// RetryTimeout passes without a success. Before each new attempt it refreshes the metadata of
// __consumer_offsets, so a moved leader is found again. op must keep the progress it made when
// it fails.
func (r *Reader) retry(ctx context.Context, what string, op func() error) error {
	return kafkaconn.Retry(ctx, r.log, what, r.retryTimeout, func(attempt int) error {
		if attempt > 0 {
			if _, err := kafkaconn.Call(ctx, func() (struct{}, error) { return struct{}{}, r.client.RefreshMetadata(Topic) }); err != nil {
				r.log.Debug("refresh metadata before retry", "topic", Topic, "err", err)
			}
		}
		return op()
	})
}

// firstPermanent returns the first error that is not retriable, else the first error.
func firstPermanent(errs []error) error {
	for _, err := range errs {
		if !kafkaconn.Retriable(err) {
			return err
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}
