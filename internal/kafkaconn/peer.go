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
	if unreached(ctx, err) {
		return nil
	}
	if answersAsZooKeeper(ctx, addr, timeout) {
		return &NotKafkaError{Addr: addr, Hint: "is it ZooKeeper?"}
	}
	return nil
}

// unreached reports whether err says nothing answered at all (refused, the dial failed, ctx
// ended): asking the address anything else would only wait again.
func unreached(ctx context.Context, err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") || ctx.Err() != nil
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
	// Before the SASL diagnosis: a broker too old for our SASL exchange fails it in ways that
	// read as a refused password or a dropped connection. Not asked where nothing answered.
	if !unreached(ctx, err) {
		if old := saslTooOld(ctx, cfg, addr); old != nil {
			return old, true
		}
	}
	aerr, ok := cfg.Security.authError(addr, err)
	if ok {
		return aerr, true
	}
	if nk := notKafka(ctx, addr, min(cfg.DialTimeout, 2*time.Second), err); nk != nil {
		return nk, false
	}
	return fmt.Errorf("%s: %w", addr, aerr), false
}

// apiSaslAuthenticate is the SaslAuthenticate API key (KIP-152, Kafka 1.0).
const apiSaslAuthenticate int16 = 36

// saslTooOld explains a failed SASL probe of a broker older than Kafka 1.0: zk2kafka
// authenticates with SaslHandshake v1 and SaslAuthenticate (KIP-152), which those brokers lack.
// It asks the broker's ApiVersions once more without SASL (a broker answers ApiVersions before
// authentication, KIP-35) and names the release; nil when SASL is not configured, the broker
// does not answer that either, or it has SaslAuthenticate.
func saslTooOld(ctx context.Context, cfg Config, addr string) error {
	if cfg.Security.Mechanism == "" {
		return nil
	}
	plain := cfg
	plain.Security.Mechanism, plain.Security.User, plain.Security.Password = "", "", ""
	plain.Security.Kerberos, plain.Security.OAuth = Kerberos{}, OAuth{}
	apis, err := probeOne(ctx, plain, addr)
	if err != nil {
		return nil
	}
	if _, ok := apis[apiSaslAuthenticate]; ok {
		return nil
	}
	release := "older than 1.0"
	if v, err := versionFromAPIs(apis); err == nil {
		release = v.String()
	}
	return fmt.Errorf("kafka broker %s is Kafka %s (from its ApiVersions, asked without SASL): zk2kafka authenticates "+
		"with SaslHandshake v1 and SaslAuthenticate (KIP-152), which Kafka has from 1.0; SASL %s to older brokers is not supported",
		addr, release, cfg.Security.Mechanism)
}
