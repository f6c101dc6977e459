// Package contract holds one test suite per interface the core reaches its stores through
// (migrate.LegacyStore, LegacyRechecker, LegacyWatcher, LegacyOffsetWriter, KafkaState,
// OffsetCommitter, WriteLease). Each documented clause of an interface is one named subtest, so the same
// suite runs against the in-memory fakes of migrate/migratetest (unit tests) and against the
// real adapters on the real stack (zkreader, kafkawriter): a fake that passes its suite
// behaves, at the interface, as ZooKeeper and Kafka do, and a test of the core written against
// it means something. A fake that fails its suite is fixed, not the suite; a clause the core
// comes to rely on is documented in the interface comment and added here, in step.
//
// A harness gives a suite a fresh store per case and a backend: the means to arrange (and
// read back) the store's state by the backend's own means, bypassing the adapter under test:
// raw znodes and ephemeral registrations for ZooKeeper; topics, records, consumer commits and
// a joined member for Kafka.
//
// The package imports only migrate and the standard library.
package contract

import (
	"context"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Legacy arranges and reads the legacy tree (/consumers) of one store under test as a legacy
// consumer or an operator would, without going through the adapter under test. Methods fail
// the test on an error.
type Legacy interface {
	// CreateGroup creates /consumers/<group> with nothing below it.
	CreateGroup(t testing.TB, group string)
	// SetOffset creates or sets /consumers/<group>/offsets/<topic>/<partition> to the decimal
	// offset, creating missing parents, as the Scala consumer committed.
	SetOffset(t testing.TB, group, topic string, partition int32, offset int64)
	// SetBad creates or sets an offset znode that is not a plain valid offset (see Bad).
	SetBad(t testing.TB, group, topic string, partition int32, bad Bad)
	// DeleteOffset deletes one offset znode.
	DeleteOffset(t testing.TB, group, topic string, partition int32)
	// DeleteGroup deletes /consumers/<group> and everything below it.
	DeleteGroup(t testing.TB, group string)
	// Register makes group look like it has a running legacy consumer, as the Scala consumer
	// registers: an ephemeral ids/<consumerID>, and for each owned partition an ephemeral
	// owners/<topic>/<partition> holding "<consumerID>-0". leave removes them.
	Register(t testing.TB, group, consumerID string, owned ...migrate.TopicPartition) (leave func())
	// Read returns the data of one offset znode as stored, and false when it does not exist.
	Read(t testing.TB, group, topic string, partition int32) (data string, ok bool)
	// GroupExists reports whether /consumers/<group> exists.
	GroupExists(t testing.TB, group string) bool
}

// Bad is a kind of offset znode the core cannot use as it stands.
type Bad int

const (
	// BadSentinel holds "-1", the legacy "no offset" sentinel.
	BadSentinel Bad = iota
	// BadEmpty holds no data.
	BadEmpty
	// BadText holds data that is not a number.
	BadText
	// BadLegacyName is a znode named "0-<partition>" (a 0.7-era "brokerId-partition" child)
	// holding a valid offset; its Partition is reported as -1.
	BadLegacyName
	// BadDenied is a znode holding a valid offset that the store's session may not read (ACL).
	BadDenied
	// Padded holds PaddedOffset with whitespace around it: not bad, read as the number with a
	// Note that says so.
	Padded
)

// PaddedOffset is the offset a Padded znode holds.
const PaddedOffset = 42

func (b Bad) String() string {
	switch b {
	case BadSentinel:
		return "sentinel -1"
	case BadEmpty:
		return "empty data"
	case BadText:
		return "not a number"
	case BadLegacyName:
		return "0.7-era child name"
	case BadDenied:
		return "ACL denied"
	case Padded:
		return "whitespace around the offset"
	}
	return "unknown"
}

// invalidKinds are the Bad kinds a read reports in LegacyOffset.Invalid.
var invalidKinds = []Bad{BadSentinel, BadEmpty, BadText, BadLegacyName, BadDenied}

// Kafka arranges and reads the Kafka cluster of one store under test by Kafka's own means
// (its clients and admin API), without going through the adapter under test. Names it gives
// are unique to the case: a real cluster is shared by every test of a run.
type Kafka interface {
	// Topic creates a topic of its own with the given partitions, no records, and returns its
	// name once every partition can be described.
	Topic(t testing.TB, partitions int32) string
	// MissingTopic returns a name no topic has.
	MissingTopic(t testing.TB) string
	// Group returns the name of a group Kafka does not know yet.
	Group(t testing.TB) string
	// Produce appends n records to one partition: its log end moves by n.
	Produce(t testing.TB, topic string, partition int32, n int)
	// DeleteRecords deletes the records of a partition below offset before: its log start
	// moves there.
	DeleteRecords(t testing.TB, topic string, partition int32, before int64)
	// Commit commits offsets for group as a consumer without a group membership does.
	Commit(t testing.TB, group string, offsets map[migrate.TopicPartition]int64)
	// Committed reads the group's committed offsets and their metadata; partitions without a
	// commit are absent.
	Committed(t testing.TB, group string) map[migrate.TopicPartition]Committed
	// Join starts a consumer that joins group (subscribed to topic) and returns once it is a
	// member; leave makes it leave the group.
	Join(t testing.TB, group, topic string) (leave func())
	// Retention is the broker's configured offsets.retention.minutes.
	Retention() time.Duration
}

// Committed is one committed offset as Kafka holds it.
type Committed struct {
	Offset   int64
	Metadata string
}

// wait bounds every wait of a suite for something asynchronous (a watch firing): a hang
// guard, never a speed check.
const wait = 60 * time.Second

// ctx is a context for one case's calls, bounded so a hang fails instead of stalling.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

// cancelled is a context that has already ended.
func cancelled() context.Context {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	return c
}

func tp(topic string, p int32) migrate.TopicPartition {
	return migrate.TopicPartition{Topic: topic, Partition: p}
}
