package migrate

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Class is how one partition's two offsets relate. The names are a contract: they appear in
// JSON plans, scripts grep for them, keep them stable.
type Class string

const (
	ClassEqual            Class = "equal"
	ClassZKOnly           Class = "zk-only" // Kafka has no commit: will write
	ClassZKAhead          Class = "zk-ahead"
	ClassKafkaAhead       Class = "kafka-ahead"
	ClassBelowLogStart    Class = "below-log-start"
	ClassAboveLogEnd      Class = "above-log-end"
	ClassTopicMissing     Class = "topic-missing"
	ClassPartitionMissing Class = "partition-missing"
	ClassInvalidZnode     Class = "invalid-znode"
)

// Gate is a group-level reason not to touch a group at all.
type Gate string

const (
	GateLegacyConsumersAlive Gate = "legacy-consumers-alive"
	GateKafkaGroupActive     Gate = "kafka-group-active"
)

// Action is what copy will do with one entry.
type Action string

const (
	ActionWrite Action = "write" // commit Target into Kafka
	ActionSkip  Action = "skip"  // nothing to do, by state or by an explicit policy
	ActionBlock Action = "block" // unsafe: needs the operator; makes the plan exit 2
)

// ConflictPolicy decides between two differing offsets.
type ConflictPolicy string

const (
	ConflictMax   ConflictPolicy = "max"   // the larger wins: never move an offset backwards
	ConflictZK    ConflictPolicy = "zk"    // ZooKeeper wins, even backwards
	ConflictKafka ConflictPolicy = "kafka" // an existing Kafka commit is kept
	ConflictFail  ConflictPolicy = "fail"  // any difference blocks the partition
)

// RangePolicy decides what to do with a ZooKeeper offset outside the partition's log.
type RangePolicy string

const (
	RangeFail  RangePolicy = "fail"  // block the partition
	RangeClamp RangePolicy = "clamp" // write the nearest valid offset (log start or log end)
	RangeSkip  RangePolicy = "skip"  // leave the partition alone
)

// Policy is every decision the operator made for a run. It is stored in the plan.
type Policy struct {
	OnConflict   ConflictPolicy `json:"on_conflict"`
	OutOfRange   RangePolicy    `json:"out_of_range"`
	OffsetAdjust int64          `json:"offset_adjust"`
}

// DefaultPolicy never moves an offset backwards and never guesses at an out-of-range one.
func DefaultPolicy() Policy { return Policy{OnConflict: ConflictMax, OutOfRange: RangeFail} }

// Validate checks the policy names.
func (p Policy) Validate() error {
	switch p.OnConflict {
	case ConflictMax, ConflictZK, ConflictKafka, ConflictFail:
	default:
		return fmt.Errorf("unknown on-conflict policy %q, expected max, zk, kafka or fail", p.OnConflict)
	}
	switch p.OutOfRange {
	case RangeFail, RangeClamp, RangeSkip:
	default:
		return fmt.Errorf("unknown out-of-range policy %q, expected fail, clamp or skip", p.OutOfRange)
	}
	return nil
}

// PlanSchemaVersion is the version of the JSON plan layout; bump it on any incompatible change.
// 2: offsets_retention is a number of seconds (1 wrote a Go duration string, "168h0m0s"; a
// plan file of schema 1 is still read, see planScanner.upgrade).
const PlanSchemaVersion = 2

// Plan is the full decision for a migration run: every (group, topic, partition) with its class,
// action and reason. It is a value: computing it writes nothing.
type Plan struct {
	SchemaVersion int       `json:"schema_version"`
	CreatedAt     time.Time `json:"created_at"`
	Policy        Policy    `json:"policy"`
	Retention     Duration  `json:"offsets_retention,omitempty"`
	// Filter is the selection the plan was read with: copy reads the same selection again to
	// recompute the fingerprint.
	Filter FilterSpec `json:"filter"`
	// Cluster names the stores the plan was made from; copy refuses a plan of another cluster.
	// Nil in a plan written before it was recorded.
	Cluster *ClusterIdentity `json:"cluster,omitempty"`
	// ReadFromSchema is the schema_version of the file planfile.ReadHead read the plan from (0
	// otherwise): a schema 1 file was written before plans recorded their cluster.
	ReadFromSchema int         `json:"-"`
	Groups         []GroupPlan `json:"groups"`
	// Fingerprint is a hash of every input the plan was computed from (ZooKeeper offsets,
	// Kafka commits, group states, log ranges): a later copy recomputes it to detect drift.
	Fingerprint string `json:"fingerprint"`
}

// GroupPlan is the plan of one group.
type GroupPlan struct {
	// Group is the legacy group: its ZooKeeper offsets and liveness.
	Group string `json:"group"`
	// KafkaGroup is the Kafka group Group lands in under the plan's group map (filter.group_map),
	// whose state, members and commits the plan compared with; empty when it is Group itself.
	KafkaGroup    string   `json:"kafka_group,omitempty"`
	KafkaState    string   `json:"kafka_state"`
	KafkaMembers  int      `json:"kafka_members"`
	LiveConsumers []string `json:"live_legacy_consumers,omitempty"`
	Gates         []Gate   `json:"gates,omitempty"`
	Entries       []Entry  `json:"entries"`
}

// Entry is the plan of one partition of one group.
type Entry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Class     Class  `json:"class"`
	Action    Action `json:"action"`
	Reason    string `json:"reason"`
	// ZK is the ZooKeeper offset after --offset-adjust; nil for an invalid znode.
	ZK *int64 `json:"zk_offset"`
	// Kafka is the group's current Kafka commit; nil when there is none.
	Kafka    *int64 `json:"kafka_offset"`
	LogStart *int64 `json:"log_start,omitempty"`
	LogEnd   *int64 `json:"log_end,omitempty"`
	// Target is the offset copy writes when Action is write. Otherwise it is the offset that
	// would be written (the ZooKeeper offset, or its clamped value), 0 for an invalid znode.
	Target int64     `json:"target"`
	Znode  string    `json:"znode"`
	Mtime  time.Time `json:"zk_mtime"`
	// Suspect says why the ZooKeeper offset looks written by mistake (flagSuspect); it does not
	// change the action.
	Suspect string `json:"suspect,omitempty"`
	// Source is set when the plan writes into a cluster that replicates the znodes' cluster
	// (a Translator): Topic, ZK and Target are then in the target's log, Source holds the
	// znode's topic and offset and the most records a consumer may read again.
	Source *Source `json:"source,omitempty"`
}

// Kafka returns the Kafka group the group's offsets land in.
func (gp GroupPlan) Kafka() string {
	if gp.KafkaGroup != "" {
		return gp.KafkaGroup
	}
	return gp.Group
}

// Key returns the entry's key within group g.
func (e Entry) Key(g string) Key { return Key{Group: g, Topic: e.Topic, Partition: e.Partition} }

// Duration is a time.Duration that reads and writes JSON as a number of seconds (604800 for
// seven days, fractions when it has them), as JSON consumers expect a duration, not Go's
// "168h0m0s". Only a number is read: null, a string or a value beyond time.Duration's range are
// errors, not a zero.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, time.Duration(d).Seconds(), 'f', -1, 64), nil
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return fmt.Errorf("duration %s: expected a number of seconds", b)
	}
	secs, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s: expected a number of seconds", b)
	}
	ns := secs * float64(time.Second)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return fmt.Errorf("duration %s seconds is out of range", b)
	}
	*d = Duration(math.Round(ns))
	return nil
}
