// Package verify compares the legacy (ZooKeeper) and Kafka offset stores partition by partition
// and renders the result for people (table), scripts (JSON) and CI systems (JUnit XML). Run is
// the verb: it reads both stores through migrate's interfaces (and __consumer_offsets through a
// migrate.CommittedSource under --via-topic), compares, and writes nothing but the cutover
// markers of --mark. Compare is a pure function of two snapshots: it reads nothing and writes
// nothing.
package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Status is how one partition's two offsets relate. The names are a contract (JSON, JUnit,
// scripts): keep them stable.
type Status string

const (
	StatusMatch          Status = "match"            // both stores hold the same offset
	StatusKafkaAhead     Status = "kafka-ahead"      // consumers moved on in Kafka: fine unless --strict or beyond --max-kafka-lead
	StatusKafkaBehind    Status = "kafka-behind"     // Kafka would re-deliver records ZooKeeper consumers already had
	StatusMissingInKafka Status = "missing-in-kafka" // Kafka has no commit: the group would start from auto.offset.reset
	StatusMissingInZK    Status = "missing-in-zk"    // Kafka has a commit the group's ZooKeeper tree lacks
	StatusInvalidZnode   Status = "invalid-znode"    // the znode is not a usable offset
	// StatusKafkaOutOfRange: Kafka's commit lies below the partition's log start or above its
	// log end. It fails whatever ZooKeeper holds, equal included: a consumer starting from it
	// gets OFFSET_OUT_OF_RANGE and resets by auto.offset.reset (to the earliest or latest
	// record, skipping or repeating the log), so two stores that agree on it are not a pass.
	StatusKafkaOutOfRange Status = "kafka-out-of-range"
	// StatusAdjustMismatch: Kafka's commit is still the one zk2kafka wrote (its metadata says
	// so) and equals the znode plus that copy's --offset-adjust, which differs from the adjust
	// this verify expects. The two runs disagree on what the legacy client stored, so one of
	// them is wrong by the difference: records skipped (the copy's adjust is the larger) or read
	// again. Without this status a wrong +1 would pass as "Kafka 1 ahead: consumers moved on".
	StatusAdjustMismatch Status = "adjust-mismatch"
	// StatusNotReplicated: the ZooKeeper offset could not be placed in the log of the target
	// cluster MirrorMaker 2 replicates into (no offset sync of the partition, below the first
	// sync left, replication behind the znode): what the target should hold is not known yet.
	StatusNotReplicated Status = "not-replicated"
)

// Statuses lists every status in report order.
func Statuses() []Status {
	return []Status{StatusMatch, StatusKafkaAhead, StatusKafkaBehind, StatusMissingInKafka, StatusMissingInZK, StatusInvalidZnode,
		StatusKafkaOutOfRange, StatusAdjustMismatch, StatusNotReplicated}
}

// Verdict is a group's outcome.
type Verdict string

const (
	VerdictPass Verdict = "pass"
	VerdictFail Verdict = "fail"
)

// ReportSchemaVersion versions the JSON report layout; bump it on any incompatible change.
const ReportSchemaVersion = 1

// Options are the operator's tolerances.
type Options struct {
	// Strict requires exact equality: kafka-ahead fails too.
	Strict bool `json:"strict"`
	// MaxKafkaLead, when set, is how far Kafka may be ahead of ZooKeeper and still pass.
	MaxKafkaLead *int64 `json:"max_kafka_lead,omitempty"`
	// OffsetAdjust is what the legacy client's znodes are off from a Kafka commit by, as for
	// copy's --offset-adjust: Kafka is expected at the znode's offset plus OffsetAdjust.
	OffsetAdjust int64 `json:"offset_adjust"`
	// GroupMap names the Kafka group each legacy group was compared with (Group.KafkaGroup):
	// the states given to Compare are already those of the mapped groups.
	GroupMap migrate.GroupMap `json:"-"`
	// MatchTopic selects the Kafka commits compared (nil: all). The legacy offsets are expected
	// to be filtered already (migrate.ReadInputs does); without this, a topic filter would turn
	// every Kafka commit of an unselected topic into missing-in-zk.
	MatchTopic func(topic string) bool `json:"-"`
}

// Partition is the comparison of one partition of one group.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Status    Status `json:"status"`
	// OK is whether this partition lets its group pass under the options.
	OK bool `json:"ok"`
	// ZK is the ZooKeeper offset (nil: no usable znode); Kafka the committed one (nil: none).
	// Under an --offset-adjust, ZK is the znode's value and Expected what Kafka should hold.
	ZK       *int64 `json:"zk_offset"`
	Expected *int64 `json:"expected_kafka_offset,omitempty"`
	Kafka    *int64 `json:"kafka_offset"`
	// CopyAdjust is the --offset-adjust zk2kafka wrote Kafka's commit with, read from the
	// commit's metadata (absent: another writer).
	CopyAdjust *int64    `json:"copy_offset_adjust,omitempty"`
	Znode      string    `json:"znode,omitempty"`
	Mtime      time.Time `json:"zk_mtime,omitzero"`
	// LogStart and LogEnd are the partition's log range when Kafka's commit was checked
	// against it (Kafka has a commit and the topics given to Compare describe the partition).
	LogStart *int64 `json:"log_start,omitempty"`
	LogEnd   *int64 `json:"log_end,omitempty"`
	Reason   string `json:"reason"`
	// Source is set when the offsets compared are a MirrorMaker 2 target's: Topic, ZK and Kafka
	// are the target's, Source the znode's topic and offset in the source cluster's log and the
	// most records a consumer resumed at the translation may read again.
	Source *migrate.Source `json:"source,omitempty"`
}

// Group is the comparison of one group and its verdict.
type Group struct {
	Group string `json:"group"` // the legacy group
	// KafkaGroup is the Kafka group compared with, when a group map renames Group.
	KafkaGroup    string   `json:"kafka_group,omitempty"`
	Verdict       Verdict  `json:"verdict"`
	KafkaState    string   `json:"kafka_state"`
	KafkaMembers  int      `json:"kafka_members"`
	LiveConsumers []string `json:"live_legacy_consumers,omitempty"`
	// Marked is set by Run once it has written the group's cutover marker (Request.Mark).
	Marked     bool        `json:"marked,omitempty"`
	Partitions []Partition `json:"partitions"`
}

// Label names the group in reports: "old -> new" when a group map renames it.
func (g Group) Label() string {
	if g.KafkaGroup == "" {
		return g.Group
	}
	return g.Group + " -> " + g.KafkaGroup
}

// Failures returns the partitions that made the group fail.
func (g Group) Failures() []Partition {
	var out []Partition
	for _, p := range g.Partitions {
		if !p.OK {
			out = append(out, p)
		}
	}
	return out
}

// Summary counts a report.
type Summary struct {
	Groups       int            `json:"groups"`
	GroupsPassed int            `json:"groups_passed"`
	GroupsFailed int            `json:"groups_failed"`
	Partitions   int            `json:"partitions"`
	ByStatus     map[Status]int `json:"by_status"`
	Failed       int            `json:"partitions_failed"`
}

// Report is the outcome of a verify run. Pass is true when every group passes (vacuously
// with no group).
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	CheckedAt     time.Time `json:"checked_at"`
	Options       Options   `json:"options"`
	Pass          bool      `json:"pass"`
	Summary       Summary   `json:"summary"`
	Groups        []Group   `json:"groups"`
}

// Compare checks every legacy offset of every legacy group against the group's Kafka commits,
// every Kafka commit of a selected topic against the group's ZooKeeper tree, and every Kafka
// commit against its partition's log as topics describes it (a commit of a partition topics
// does not describe, or Kafka does not have, is not checked; nil topics checks none). A group
// missing from kafka is one Kafka does not know: no commits. Groups and partitions come out
// sorted; CheckedAt is left for the caller to stamp.
func Compare(legacy []migrate.LegacyGroup, kafka map[string]migrate.GroupState, topics map[string]migrate.TopicInfo, opts Options) Report {
	r := Report{SchemaVersion: ReportSchemaVersion, Options: opts, Groups: []Group{}}
	for _, lg := range legacy {
		r.Groups = append(r.Groups, compareGroup(lg, kafka[lg.Group], topics, opts))
	}
	slices.SortFunc(r.Groups, func(a, b Group) int { return cmp.Compare(a.Group, b.Group) })
	r.Summary = summarize(r.Groups)
	r.Pass = r.Summary.GroupsFailed == 0
	return r
}

func compareGroup(lg migrate.LegacyGroup, ks migrate.GroupState, topics map[string]migrate.TopicInfo, opts Options) Group {
	g := Group{Group: lg.Group, KafkaState: ks.State, KafkaMembers: ks.Members, Partitions: []Partition{}}
	if k := opts.GroupMap.Kafka(lg.Group); k != lg.Group {
		g.KafkaGroup = k
	}
	if len(lg.LiveConsumers) > 0 {
		g.LiveConsumers = slices.Sorted(slices.Values(lg.LiveConsumers))
	}
	valid := map[migrate.TopicPartition][]migrate.LegacyOffset{}
	for _, o := range lg.Offsets {
		if o.Invalid == "" && o.Partition >= 0 && o.Offset >= 0 {
			tp := migrate.TopicPartition{Topic: o.Topic, Partition: o.Partition}
			valid[tp] = append(valid[tp], o)
		}
	}
	seen := map[migrate.TopicPartition]bool{}
	for _, o := range lg.Offsets {
		tp := migrate.TopicPartition{Topic: o.Topic, Partition: o.Partition}
		p := Partition{Topic: o.Topic, Partition: o.Partition, Znode: o.Path, Mtime: o.Mtime}
		if k, ok := ks.Committed[tp]; ok && o.Partition >= 0 {
			p.Kafka = &k
			seen[tp] = true
			if prov, ok := migrate.ParseProvenance(ks.Metadata[tp]); ok {
				p.CopyAdjust = &prov.Adjust // 0 too: a copy without an adjust is a decision as well
			}
		}
		if o.Source != nil {
			p.Source = &migrate.Source{Topic: o.Source.Topic, Offset: o.Source.Offset, MaxReread: o.Source.MaxReread}
		}
		if why := invalidZnode(o, valid[tp], opts.OffsetAdjust); why != "" {
			p.Status, p.Reason = StatusInvalidZnode, why
		} else if s := o.Source; s != nil && s.Blocked != "" {
			p.Status, p.Reason = StatusNotReplicated, fmt.Sprintf("ZooKeeper %d of source topic %q is %s: %s", s.Offset, s.Topic, s.Blocked, s.Reason)
		} else {
			zk := o.Offset
			p.ZK = &zk
			classify(&p, opts)
		}
		checkLog(&p, topics)
		g.Partitions = append(g.Partitions, p)
	}
	for tp, k := range ks.Committed {
		if seen[tp] || (opts.MatchTopic != nil && !opts.MatchTopic(tp.Topic)) {
			continue
		}
		p := Partition{Topic: tp.Topic, Partition: tp.Partition, Status: StatusMissingInZK, Kafka: &k,
			Reason: fmt.Sprintf("Kafka has commit %d, the group's ZooKeeper tree has no offset for this partition", k)}
		checkLog(&p, topics)
		g.Partitions = append(g.Partitions, p)
	}
	slices.SortFunc(g.Partitions, func(a, b Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Znode, b.Znode))
	})
	g.Verdict = VerdictPass
	if len(g.Failures()) > 0 {
		g.Verdict = VerdictFail
	}
	return g
}

// invalidZnode says why the offset znode o cannot be compared (empty if it can): the reader
// found it invalid, it names a negative partition or holds a negative offset, the adjust takes
// it out of range, or other znodes (same) name the same partition.
func invalidZnode(o migrate.LegacyOffset, same []migrate.LegacyOffset, adjust int64) string {
	switch {
	case o.Invalid != "":
		return o.Invalid
	case o.Partition < 0:
		return fmt.Sprintf("negative partition %d", o.Partition)
	case o.Offset < 0:
		return fmt.Sprintf("znode holds negative offset %d", o.Offset)
	case !adjustOK(o.Offset, adjust):
		return fmt.Sprintf("znode offset %d with --offset-adjust %+d is not a valid offset (below 0 or overflow)", o.Offset, adjust)
	case len(same) > 1:
		return fmt.Sprintf("%d znodes name the same partition (%s): fix ZooKeeper first", len(same), paths(same))
	}
	return ""
}

// classify compares a valid ZooKeeper offset (after the adjust) with the Kafka commit (if
// any) and decides OK.
func classify(p *Partition, opts Options) {
	raw := *p.ZK
	zk := raw + opts.OffsetAdjust
	if opts.OffsetAdjust != 0 {
		p.Expected = &zk
	}
	if p.Kafka == nil {
		p.Status, p.Reason = StatusMissingInKafka, fmt.Sprintf("ZooKeeper %s, Kafka has no commit", zkText(raw, opts.OffsetAdjust))
		return
	}
	k := *p.Kafka
	if a := p.CopyAdjust; a != nil && *a != opts.OffsetAdjust && adjustOK(raw, *a) && k == raw+*a {
		p.Status = StatusAdjustMismatch
		p.Reason = fmt.Sprintf("Kafka %d is ZooKeeper %d %+d: the --offset-adjust of the zk2kafka copy that wrote it, which "+
			"no consumer has moved since; this verify expects --offset-adjust %+d. One of the two is wrong about what the "+
			"legacy client stored: %s", k, raw, *a, opts.OffsetAdjust, mismatchEffect(*a-opts.OffsetAdjust))
		return
	}
	zkt := zkText(raw, opts.OffsetAdjust)
	switch {
	case k == zk && opts.OffsetAdjust != 0:
		p.Status, p.OK, p.Reason = StatusMatch, true, fmt.Sprintf("both at %d (%s)", k, zkt)
	case k == zk:
		p.Status, p.OK, p.Reason = StatusMatch, true, fmt.Sprintf("both at %d", k)
	case k < zk && p.Source != nil && !opts.Strict:
		// Into a MirrorMaker 2 target a commit behind the translation re-reads records and skips
		// none; MirrorMaker 2's own translation (sync.group.offsets.enabled) rounds further down
		// than the offset syncs at times, as it keeps fewer of them.
		p.Status, p.OK = StatusKafkaBehind, true
		p.Reason = fmt.Sprintf("the target's commit %d is %d behind ZooKeeper %d translated into its log (%s): "+
			"a consumer starting there reads up to %d records again, none skipped (--strict fails it)", k, zk-k, p.Source.Offset, zkt, zk-k+p.Source.MaxReread)
	case k < zk:
		p.Status, p.Reason = StatusKafkaBehind, fmt.Sprintf("Kafka %d is %d behind ZooKeeper %s", k, zk-k, zkt)
	default:
		classifyAhead(p, opts, k-zk, zkt)
	}
}

// classifyAhead decides a Kafka commit lead records ahead of ZooKeeper's (zkt, as reasons show
// it).
func classifyAhead(p *Partition, opts Options, lead int64, zkt string) {
	k := *p.Kafka
	p.Status = StatusKafkaAhead
	switch {
	case p.Source != nil && (opts.MaxKafkaLead == nil || lead > *opts.MaxKafkaLead):
		// ZooKeeper's offset translated is where the legacy consumer's next record lies in
		// the target (or before it): a commit past it skips records it has not read, unless
		// consumers moved on in the target since the cutover, which --max-kafka-lead allows.
		p.Reason = fmt.Sprintf("the target's commit %d is %d ahead of ZooKeeper %d translated into its log (%s): "+
			"a consumer starting there may skip records the legacy consumer has not read (--max-kafka-lead allows consumers that moved on since the cutover)",
			k, lead, p.Source.Offset, zkt)
	case opts.Strict:
		p.Reason = fmt.Sprintf("Kafka %d is %d ahead of ZooKeeper %s: --strict requires equality", k, lead, zkt)
	case opts.MaxKafkaLead != nil && lead > *opts.MaxKafkaLead:
		p.Reason = fmt.Sprintf("Kafka %d is %d ahead of ZooKeeper %s: more than --max-kafka-lead %d", k, lead, zkt, *opts.MaxKafkaLead)
	case opts.MaxKafkaLead != nil:
		p.OK, p.Reason = true, fmt.Sprintf("Kafka %d is %d ahead of ZooKeeper %s, within --max-kafka-lead %d", k, lead, zkt, *opts.MaxKafkaLead)
	default:
		p.OK, p.Reason = true, fmt.Sprintf("Kafka %d is %d ahead of ZooKeeper %s (consumers moved on in Kafka)", k, lead, zkt)
	}
}

// zkText is a ZooKeeper offset as reasons show it: the znode's value, and the adjust applied.
func zkText(raw, adj int64) string {
	if adj == 0 {
		return fmt.Sprintf("%d", raw)
	}
	return fmt.Sprintf("%d (znode %d %+d --offset-adjust)", raw+adj, raw, adj)
}

// mismatchEffect says what a consumer starting from Kafka's commit does when the copy's adjust
// exceeds the expected one by diff.
func mismatchEffect(diff int64) string {
	if diff > 0 {
		return fmt.Sprintf("if this verify is right, a consumer starting from Kafka skips %d record(s) per partition", diff)
	}
	return fmt.Sprintf("if this verify is right, a consumer starting from Kafka reads %d record(s) per partition again", -diff)
}

// checkLog turns a partition whose Kafka commit lies outside its log into kafka-out-of-range,
// whatever it was (the comparison of the two stores stays in the reason).
func checkLog(p *Partition, topics map[string]migrate.TopicInfo) {
	if p.Kafka == nil || p.Partition < 0 {
		return
	}
	ti, ok := topics[p.Topic]
	if !ok || !ti.Exists {
		return
	}
	r, ok := ti.Partitions[p.Partition]
	if !ok {
		return
	}
	p.LogStart, p.LogEnd = &r.LogStart, &r.LogEnd
	k := *p.Kafka
	var where string
	switch {
	case k < r.LogStart:
		where = fmt.Sprintf("below the log start %d", r.LogStart)
	case k > r.LogEnd:
		where = fmt.Sprintf("above the log end %d", r.LogEnd)
	default:
		return
	}
	p.Reason = fmt.Sprintf("Kafka commit %d is %s: a consumer starting there resets (auto.offset.reset); %s", k, where, p.Reason)
	p.Status, p.OK = StatusKafkaOutOfRange, false
}

func paths(os []migrate.LegacyOffset) string {
	ps := make([]string, len(os))
	for i, o := range os {
		ps[i] = o.Path
	}
	slices.Sort(ps)
	return strings.Join(ps, ", ")
}

func summarize(groups []Group) Summary {
	s := Summary{Groups: len(groups), ByStatus: map[Status]int{}}
	for _, g := range groups {
		if g.Verdict == VerdictPass {
			s.GroupsPassed++
		} else {
			s.GroupsFailed++
		}
		for _, p := range g.Partitions {
			s.Partitions++
			s.ByStatus[p.Status]++
			if !p.OK {
				s.Failed++
			}
		}
	}
	return s
}

// adjustOK reports whether off+adj is a valid offset (migrate.AdjustOffset).
func adjustOK(off, adj int64) bool {
	_, ok := migrate.AdjustOffset(off, adj)
	return ok
}
