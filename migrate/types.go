// Package migrate is the core of zk2kafka: the domain types, the plan rules (how each
// partition is classified and decided, build.go; what a valid plan is, validate.go; the gates),
// the plan computation (Planner), and the interfaces the stores are reached through
// (stores.go). It reads the stores through those interfaces and writes nothing itself; copy's
// executor is migrate/copier, the plan-file format migrate/planfile. It imports only the
// standard library; the ZooKeeper and Kafka adapters implement its interfaces.
package migrate

import (
	"fmt"
	"time"
)

// Key names one consumer-group offset: a group's position in one partition of one topic.
type Key struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

func (k Key) String() string { return fmt.Sprintf("%s/%s/%d", k.Group, k.Topic, k.Partition) }

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// LegacyOffset is one offset znode of the legacy store as read from ZooKeeper
// (/consumers/<group>/offsets/<topic>/<partition>).
//
// The stored value is the next offset to consume, which is what a Kafka commit means too.
// When Invalid is non-empty the znode could not be used (sentinel -1, empty, non-numeric,
// a 0.7-era "brokerId-partition" child name, an ACL denial...) and Offset is meaningless.
type LegacyOffset struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Path      string    `json:"znode"`
	Mtime     time.Time `json:"mtime"`
	Invalid   string    `json:"invalid,omitempty"`
	// Note is something about the znode the plan says beside the offset, e.g. that its data
	// had whitespace around the number (read as the number: legacy clients wrote what they wrote).
	Note string `json:"note,omitempty"`
	// Source is set when the offset was translated from another cluster's log (Translated):
	// Topic and Offset are then the target's, Source the znode's own.
	Source *Source `json:"source,omitempty"`
}

// LegacyGroup is everything the legacy store holds about one group.
type LegacyGroup struct {
	Group   string
	Offsets []LegacyOffset
	// LiveConsumers lists the registrations under /consumers/<g>/ids and /consumers/<g>/owners,
	// sorted, as "ids/<id>", "owners/<topic>/<partition>=<owner data>", or "<path>: <why>" for
	// one that could not be read (see Consumers). Legacy consumers never join the Kafka group,
	// so this is the only sign they still run.
	LiveConsumers []string
}

// PartitionRange is the log start and end offsets of one partition.
type PartitionRange struct {
	LogStart int64 `json:"log_start"`
	LogEnd   int64 `json:"log_end"`
}

// TopicInfo describes a topic as Kafka sees it. Exists is false when Kafka does not know it.
type TopicInfo struct {
	Exists     bool
	Partitions map[int32]PartitionRange
}

// GroupState is the coordinator's view of a group.
type GroupState struct {
	// State is the coordinator's state name ("Empty", "Stable", "Dead", ...), or "" when the
	// group does not exist.
	State   string
	Members int
	// Committed holds the group's committed offsets; partitions without a commit are absent.
	Committed map[TopicPartition]int64
	// Metadata holds the metadata string of each commit that carries one, where the store
	// reads it (nil otherwise): verify reads zk2kafka's Provenance back from it.
	Metadata map[TopicPartition]string
}

// Active reports whether the coordinator would refuse an admin (generation -1) commit.
func (s GroupState) Active() bool {
	switch s.State {
	case "", "Empty", "Dead":
		return s.Members > 0
	}
	return true
}

// Commit is one offset to write into Kafka for a group.
type Commit struct {
	TopicPartition
	Offset   int64
	Metadata string
}

// CommitError is the outcome of one partition of a commit: Err nil means written.
type CommitError struct {
	TopicPartition
	Err error
}
