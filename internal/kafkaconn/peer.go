package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// NotKafkaError names a bootstrap server that accepted the connection but did not answer as a
// Kafka broker: ZooKeeper given as --kafka, or any other service.
type NotKafkaError struct {
	Addr string // host:port as given
	Hint string // what it looks like instead: "is it ZooKeeper?", or what its answer was
}

func (e *NotKafkaError) Error() string { return e.Addr + " does not answer as Kafka: " + e.Hint }

// notKafka explains err, the failure of the ApiVersions probe of addr, when the peer is not a
// Kafka broker; nil when it may well be one (unreachable, or a TLS listener: see authError).
func notKafka(ctx context.Context, addr string, timeout time.Duration, err error) error {
	var perr sarama.PacketDecodingError
	if errors.As(err, &perr) {
		return &NotKafkaError{Addr: addr, Hint: "its answer is not a Kafka response (" + perr.Info + ")"}
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") || ctx.Err() != nil {
		return nil
	}
	if answersAsZooKeeper(ctx, addr, timeout) {
		return &NotKafkaError{Addr: addr, Hint: "is it ZooKeeper?"}
	}
	return nil
}

// answersAsZooKeeper asks addr ZooKeeper's four-letter word "srvr". A ZooKeeper server answers
// with its version, or, where the word is not allowed (4lw.commands.whitelist), with a sentence
// saying so: either names it, and neither opens a session. A Kafka broker reads the four bytes
// as a request length and waits.
func answersAsZooKeeper(ctx context.Context, addr string, timeout time.Duration) bool {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close() // a probe: a failed close loses nothing
	if deadline, ok := ctx.Deadline(); ok {
		if err := c.SetDeadline(deadline); err != nil {
			return false
		}
	}
	if _, err := c.Write([]byte("srvr")); err != nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(c, 256))
	if len(b) == 0 && err != nil {
		return false
	}
	s := string(b)
	return strings.HasPrefix(s, "Zookeeper version:") || strings.Contains(s, "is not executed because it is not in the whitelist")
}

// describeProbeError is the probe's error for one bootstrap server, with what it is when it is
// not Kafka.
func describeProbeError(ctx context.Context, cfg Config, addr string, err error) (error, bool) {
	aerr, ok := cfg.Security.authError(addr, err)
	if ok {
		return aerr, true
	}
	if nk := notKafka(ctx, addr, min(cfg.DialTimeout, 2*time.Second), err); nk != nil {
		return nk, false
	}
	return fmt.Errorf("%s: %w", addr, aerr), false
}
