// Package kafkawriter is zk2kafka's Kafka adapter, with sarama. Despite its name it mostly reads.
//
// Reads (migrate.KafkaState): topics and their log start and end (Metadata, ListOffsets per
// leader), groups' state and members (DescribeGroups per coordinator), committed offsets and
// their metadata (OffsetFetch), offsets.retention.minutes (DescribeConfigs), the cluster id.
//
// Writes (migrate.OffsetCommitter): admin offset commits (generation -1, no member) through each
// group's coordinator, in chunks a record batch can hold; and topics, for tests and the demo.
// Errors are reported per partition, never collapsed into one. Connecting (settings, security,
// version negotiation, which errors are worth a retry) is internal/kafkaconn's.
package kafkawriter

import (
	"log/slog"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// Defaults applied by Config.withDefaults; the connection's own (client id, dial and retry
// timeouts, version) are kafkaconn's.
const (
	DefaultChunkSize = 2000
	DefaultParallel  = 8
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
	// Kafka version such as "3.9.0", at least kafkaconn.MinVersion (KIP-88), and see kafkaconn.Negotiate.
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
	Security kafkaconn.Security
}

// conn is the part of c that says how to connect, shared with offsetlog.
func (c Config) conn() kafkaconn.Config {
	return kafkaconn.Config{Bootstrap: c.Bootstrap, ClientID: c.ClientID, Version: c.Version, DialTimeout: c.DialTimeout,
		Logger: c.Logger, LibraryDebug: c.LibraryDebug, Security: c.Security}
}

func (c Config) withDefaults() Config {
	k := c.conn().WithDefaults()
	c.ClientID, c.Version, c.DialTimeout, c.Logger = k.ClientID, k.Version, k.DialTimeout, k.Logger
	if c.RetryTimeout <= 0 {
		c.RetryTimeout = kafkaconn.DefaultRetryTimeout
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
