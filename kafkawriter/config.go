// Package kafkawriter is zk2kafka's Kafka adapter: it implements migrate.KafkaState and
// migrate.OffsetCommitter with sarama. It batches every request the protocol allows to batch
// (ListOffsets per leader, DescribeGroups per coordinator, OffsetCommit in chunks) and reports
// errors per partition, never collapsed into one.
package kafkawriter

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Defaults applied by Config.withDefaults.
const (
	DefaultClientID    = "zk2kafka"
	DefaultChunkSize   = 2000
	DefaultParallel    = 8
	DefaultDialTimeout = 10 * time.Second
	// DefaultRetryTimeout bounds the retries of one group's commit or read after retriable
	// coordinator or network errors.
	DefaultRetryTimeout = 30 * time.Second
	// VersionAuto asks Open to negotiate the protocol level from the broker's ApiVersions.
	VersionAuto = "auto"
)

// maxChunkBytes bounds the estimated size of the records one OffsetCommit appends to
// __consumer_offsets. The coordinator writes one request as ONE record batch, and a batch
// above message.max.bytes (default 1 MiB) fails every partition of the request with
// INVALID_COMMIT_OFFSET_SIZE; half of the default leaves room for record overhead.
const maxChunkBytes = 512 << 10

// Config configures a Client. The zero value of every field but Bootstrap means its default.
type Config struct {
	// Bootstrap lists host:port of one or more brokers.
	Bootstrap []string
	// ClientID is sent with every request (broker logs, quotas). Default "zk2kafka".
	ClientID string
	// Version is "auto" (default: negotiated from the bootstrap broker's ApiVersions) or a
	// Kafka version such as "3.9.0". It must be at least 2.1.0: Kafka 4.x rejects the
	// OffsetCommit v0/v1 an older setting would send (KIP-896).
	Version string
	// DialTimeout bounds each TCP connect. Default 10s.
	DialTimeout time.Duration
	// RetryTimeout bounds the retries of one group after retriable errors. Default 30s.
	RetryTimeout time.Duration
	// Logger receives this package's logs. Default: discard.
	Logger *slog.Logger
	// LibraryDebug forwards sarama's own log lines to Logger at debug level.
	LibraryDebug bool
	// ChunkSize is the maximum number of partitions in one OffsetCommit request (default
	// 2000). Chunks are also bounded by the byte size of group, topic and metadata strings.
	ChunkSize int
	// Parallel is how many groups are read or committed concurrently. Default 8.
	Parallel int
	// Connections is how many connections per coordinator carry group requests (a broker
	// serves one request per connection at a time). Default and maximum: Parallel.
	Connections int
	// Security is TLS and SASL for every connection. Default: plaintext, no authentication.
	Security Security
}

func (c Config) withDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = DefaultClientID
	}
	if c.Version == "" {
		c.Version = VersionAuto
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.RetryTimeout <= 0 {
		c.RetryTimeout = DefaultRetryTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.Parallel <= 0 {
		c.Parallel = DefaultParallel
	}
	if c.Connections <= 0 || c.Connections > c.Parallel {
		c.Connections = c.Parallel
	}
	return c
}

func (c Config) validate() error {
	if len(c.Bootstrap) == 0 {
		return errors.New("no kafka bootstrap servers given")
	}
	for _, b := range c.Bootstrap {
		if err := checkHostPort(b); err != nil {
			return err
		}
	}
	if c.Version != VersionAuto {
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
