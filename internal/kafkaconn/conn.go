// Package kafkaconn is the one way zk2kafka connects to Kafka, shared by the adapters that
// talk to brokers (kafkawriter, offsetlog) so that they cannot drift apart. It reads the
// connection settings (bootstrap servers, client id, protocol version, timeouts, TLS and SASL
// with the files they name), asks a bootstrap broker for its ApiVersions to settle the protocol
// level, opens sarama clients, and says which errors of those clients are worth a retry. It
// writes nothing to the cluster: what is sent over a client is its callers' business.
//
// It lives under internal/ because it is plumbing of this module, not an API: the adapters must
// not import each other (cmd → migrate/verify → adapters), and both import this package instead.
package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// Defaults applied by Config.WithDefaults, and the default of the callers' retry budgets.
const (
	DefaultClientID    = "zk2kafka"
	DefaultDialTimeout = 10 * time.Second
	// DefaultRetryTimeout bounds the retries of one operation (a group's commit or read, a
	// replay of __consumer_offsets) after retriable errors.
	DefaultRetryTimeout = 30 * time.Second
	// VersionAuto asks Negotiate for the protocol level from the broker's ApiVersions.
	VersionAuto = "auto"
)

// OffsetsTopic is Kafka's offset store, whose partition leaders coordinate the groups.
const OffsetsTopic = "__consumer_offsets"

// Config says how to reach a cluster. The zero value of every field but Bootstrap means its
// default.
type Config struct {
	// Bootstrap lists host:port of one or more brokers.
	Bootstrap []string
	// ClientID is sent with every request (broker logs, quotas). Default "zk2kafka".
	ClientID string
	// Version is "auto" (default: negotiated from the bootstrap broker's ApiVersions) or a
	// Kafka version such as "3.9.0", at least MinVersion.
	Version string
	// DialTimeout bounds each TCP connect. Default 10s.
	DialTimeout time.Duration
	// Logger receives this package's logs. Default: discard.
	Logger *slog.Logger
	// LibraryDebug forwards sarama's own log lines to Logger at debug level.
	LibraryDebug bool
	// Security is TLS and SASL for every connection. Default: plaintext, no authentication.
	Security Security
}

// WithDefaults fills the fields left at their zero value.
func (c Config) WithDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = DefaultClientID
	}
	if c.Version == "" {
		c.Version = VersionAuto
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks the settings and the files they name without any network call.
func (c Config) Validate() error {
	if len(c.Bootstrap) == 0 {
		return errors.New("no kafka bootstrap servers given")
	}
	for _, b := range c.Bootstrap {
		if err := checkHostPort(b); err != nil {
			return err
		}
	}
	if c.Version != "" && c.Version != VersionAuto {
		if _, err := parseVersion(c.Version); err != nil {
			return err
		}
	}
	return c.Security.Validate()
}

// ParseBootstrap splits a comma-separated list of host:port ("a:9092,b:9092") into its servers,
// ignoring blanks around commas. Every entry must have a host and a numeric port.
func ParseBootstrap(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if err := checkHostPort(part); err != nil {
			return nil, err
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kafka bootstrap servers %q: expected host:port[,host:port...]", s)
	}
	return out, nil
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("kafka bootstrap server %q: expected host:port: %w", s, err)
	}
	if host == "" {
		return fmt.Errorf("kafka bootstrap server %q: missing host", s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("kafka bootstrap server %q: port %q is not a number in 1-65535", s, port)
	}
	return nil
}

// Negotiate checks cfg and returns the protocol level to configure every client with. It first
// asks a bootstrap broker for its ApiVersions: that is the reachability check (an unreachable
// cluster is one error naming every bootstrap server; refused credentials, an untrusted
// certificate or a server that is not Kafka are named as such) and, with Version "auto", the
// source of the level (see milestones). An explicit Version is used as given, within the
// limits checkExplicit sets; a broker older than MinVersion is refused either way.
func Negotiate(ctx context.Context, cfg Config) (sarama.KafkaVersion, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return sarama.KafkaVersion{}, err
	}
	if cfg.LibraryDebug {
		// sarama has one process-wide logger and no per-client one: set it only when the
		// operator asked for the library's own logs (--debug).
		sarama.Logger = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	}
	if cfg.Security.InsecureSkipVerify {
		cfg.Logger.Warn("KAFKA TLS CERTIFICATE VERIFICATION IS OFF (insecure-skip-verify): any server can pose as the brokers and read the credentials and offsets sent to them")
	}
	apis, addr, err := probe(ctx, cfg)
	if err != nil {
		return sarama.KafkaVersion{}, err
	}
	// A broker below MinVersion is refused whatever --kafka-version says: an explicit version
	// only chooses among the request versions a supported broker has.
	detected, err := versionFromAPIs(apis)
	if err != nil {
		return sarama.KafkaVersion{}, fmt.Errorf("kafka broker %s: %w", addr, err)
	}
	version := detected
	if cfg.Version != VersionAuto {
		if version, err = parseVersion(cfg.Version); err != nil {
			return sarama.KafkaVersion{}, err
		}
		if err := checkExplicit(version, detected); err != nil {
			return sarama.KafkaVersion{}, fmt.Errorf("kafka broker %s: %w", addr, err)
		}
	}
	cfg.Logger.Debug("kafka protocol level", "broker", addr, "detected", detected, "using", version)
	return version, nil
}

// SaramaConfig is the sarama configuration every client of this project starts from: cfg's
// security, client id and dial timeout, the protocol level, and no metadata of topics nobody
// asked for. Callers set what only they need (Metadata.Full for a client that must know every
// broker).
func SaramaConfig(cfg Config, version sarama.KafkaVersion) (*sarama.Config, error) {
	cfg = cfg.WithDefaults()
	conf := sarama.NewConfig()
	if err := cfg.Security.Apply(conf); err != nil {
		return nil, err
	}
	conf.ClientID = cfg.ClientID
	conf.Net.DialTimeout = cfg.DialTimeout
	conf.Version = version
	// A Metadata request for a missing topic must never create it (sarama's default would,
	// on brokers with auto.create.topics.enable).
	conf.Metadata.AllowAutoTopicCreation = false
	// No metadata of every topic at start nor in the background: each caller asks for fresh
	// metadata of exactly the topics it needs, when it needs them.
	conf.Metadata.Full = false
	conf.Metadata.RefreshFrequency = 0
	// Below sarama's 30s read timeout, so a slow admin request (CreateTopics) comes back as
	// REQUEST_TIMED_OUT from the broker rather than as a dropped connection.
	conf.Admin.Timeout = 20 * time.Second
	return conf, nil
}

// NewClient is sarama.NewClient for cfg's bootstrap servers under ctx; a client that connects
// after ctx ended is closed rather than leaked. Errors name the servers and the security
// protocol.
func NewClient(ctx context.Context, cfg Config, conf *sarama.Config) (sarama.Client, error) {
	cfg = cfg.WithDefaults()
	type result struct {
		c   sarama.Client
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := sarama.NewClient(cfg.Bootstrap, conf)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("connect to kafka at %v (%s): %w", cfg.Bootstrap, cfg.Security.Describe(), r.err)
		}
		return r.c, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				if err := r.c.Close(); err != nil {
					cfg.Logger.Warn("close abandoned kafka client", "err", err)
				}
			}
		}()
		return nil, ctx.Err()
	}
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
