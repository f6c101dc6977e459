package archive

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// Target is the store a restore writes.
type Target string

const (
	TargetKafka Target = "kafka"
	TargetZK    Target = "zk"
)

// Current is what the stores hold now for one group of the file.
type Current struct {
	// LiveConsumers are the group's legacy registrations (/ids, /owners) in ZooKeeper.
	LiveConsumers []string
	// Kafka is the coordinator's view of the group (a Kafka target only).
	Kafka migrate.GroupState
	// ZK is the group's offset znodes (a ZooKeeper target only); absent when none.
	ZK []migrate.LegacyOffset
}

// State is the current state of every group of the file and, for a Kafka target, every topic.
type State struct {
	Groups map[string]Current
	Topics map[string]migrate.TopicInfo
}

// Item is one partition of a restore.
type Item struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Line      int    `json:"line"`
	// Offset is what the file says to put back; nil: "no commit" (a backup), not restorable.
	Offset *int64 `json:"restore_to"`
	// Current is what the target holds now (nil: nothing); CurrentInvalid a ZooKeeper znode
	// that holds no usable offset.
	Current        *int64                 `json:"current"`
	CurrentInvalid string                 `json:"current_invalid,omitempty"`
	CurrentZnode   string                 `json:"current_znode,omitempty"`
	CurrentMtime   time.Time              `json:"-"`
	Mtime          time.Time              `json:"-"` // from a ZooKeeper export
	Status         copier.PartitionStatus `json:"status"`
	Reason         string                 `json:"reason,omitempty"`
	ReadBack       *int64                 `json:"read_back,omitempty"`
}

// Group is one group of a restore.
type Group struct {
	Group string `json:"group"`
	// KafkaGroup is the Kafka group a restore --to kafka writes, when --group-map renames Group.
	KafkaGroup    string         `json:"kafka_group,omitempty"`
	KafkaState    string         `json:"kafka_state,omitempty"`
	KafkaMembers  int            `json:"kafka_members,omitempty"`
	LiveConsumers []string       `json:"live_legacy_consumers,omitempty"`
	Gates         []migrate.Gate `json:"gates,omitempty"`
	Items         []Item         `json:"partitions"`
}

// Plan is what a restore will do (or did) per group and partition. Every item is
// would-write, already or blocked after PlanRestore; the executor turns would-write into
// written or failed.
type Plan struct {
	Target Target  `json:"target"`
	Format Format  `json:"format"`
	Source Source  `json:"source,omitempty"`
	DryRun bool    `json:"dry_run"`
	Groups []Group `json:"groups"`
}

// Counts returns how many items are in each status.
func (p Plan) Counts() map[copier.PartitionStatus]int {
	n := map[copier.PartitionStatus]int{}
	for _, g := range p.Groups {
		for _, it := range g.Items {
			n[it.Status]++
		}
	}
	return n
}

// Select keeps the entries of the groups and topics f selects. A group named exactly in f
// that the file does not hold is an error, as a typo must not restore nothing silently.
func (file File) Select(f migrate.Filter) (File, error) {
	out := file
	out.Entries = nil
	have := map[string]bool{}
	for _, e := range file.Entries {
		have[e.Group] = true
		if f.MatchGroup(e.Group) && f.MatchTopic(e.Topic) {
			out.Entries = append(out.Entries, e)
		}
	}
	for _, g := range f.Groups {
		if !have[g] {
			return File{}, fmt.Errorf("group %q (--group) is not in the file", g)
		}
	}
	return out, nil
}

// Groups returns the sorted names of the file's groups, and Topics those of its topics.
func (file File) Groups() []string {
	return names(file.Entries, func(e Entry) string { return e.Group })
}
func (file File) Topics() []string {
	return names(file.Entries, func(e Entry) string { return e.Topic })
}

func names(es []Entry, key func(Entry) string) []string {
	var out []string
	for _, e := range es {
		out = append(out, key(e))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Options are the operator's overrides.
type Options struct {
	// Force restores to ZooKeeper although legacy consumers are registered, and restores a
	// backup although Kafka moved since the copy. It never overrides an active Kafka group:
	// the broker refuses admin commits then anyway.
	Force bool
}

// PlanRestore decides, for every entry of the file, whether the target gets it. It is pure. An
// error means the state is not a complete read of the file's groups and topics, or the file
// cannot go to that target at all.
func PlanRestore(file File, to Target, st State, opts Options) (Plan, error) {
	if to != TargetKafka && to != TargetZK {
		return Plan{}, fmt.Errorf("unknown restore target %q, expected kafka or zk", to)
	}
	if to == TargetZK && file.Format == FormatBackup {
		return Plan{}, fmt.Errorf("a copy backup holds Kafka's offsets before the copy: restore it --to kafka")
	}
	p := Plan{Target: to, Format: file.Format, Source: file.Source, DryRun: true, Groups: []Group{}}
	byGroup := map[string][]Entry{}
	for _, e := range file.Entries {
		byGroup[e.Group] = append(byGroup[e.Group], e)
	}
	for _, name := range file.Groups() {
		cur, ok := st.Groups[name]
		if !ok {
			return Plan{}, fmt.Errorf("group %q: no current state read", name)
		}
		g := Group{Group: name, KafkaState: cur.Kafka.State, KafkaMembers: cur.Kafka.Members, LiveConsumers: slices.Clone(cur.LiveConsumers)}
		if len(cur.LiveConsumers) > 0 && (to == TargetKafka || !opts.Force) {
			g.Gates = append(g.Gates, migrate.GateLegacyConsumersAlive)
		}
		if to == TargetKafka && cur.Kafka.Active() {
			g.Gates = append(g.Gates, migrate.GateKafkaGroupActive)
		}
		entries := byGroup[name]
		slices.SortFunc(entries, func(a, b Entry) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		for _, e := range entries {
			it := Item{Topic: e.Topic, Partition: e.Partition, Line: e.Line, Offset: e.Offset, Mtime: e.Mtime}
			var err error
			if to == TargetKafka {
				err = planKafka(&it, e, cur, st.Topics, opts)
			} else {
				planZK(&it, name, cur, opts)
			}
			if err != nil {
				return Plan{}, fmt.Errorf("group %q topic %q partition %d: %w", name, e.Topic, e.Partition, err)
			}
			if len(g.Gates) > 0 && it.Status == copier.StatusWouldWrite {
				it.Status, it.Reason = copier.StatusBlocked, gateReason(g)
				if to == TargetZK {
					it.Reason += ": they would overwrite it (stop them first, or --force)"
				}
			}
			g.Items = append(g.Items, it)
		}
		p.Groups = append(p.Groups, g)
	}
	return p, nil
}

func planKafka(it *Item, e Entry, cur Current, topics map[string]migrate.TopicInfo, opts Options) error {
	tp := migrate.TopicPartition{Topic: e.Topic, Partition: e.Partition}
	if k, ok := cur.Kafka.Committed[tp]; ok {
		it.Current = &k
	}
	ti, ok := topics[e.Topic]
	if !ok {
		return fmt.Errorf("no Kafka topic description read")
	}
	r, hasPart := ti.Partitions[e.Partition]
	switch {
	case e.Offset == nil && it.Current == nil:
		it.Status, it.Reason = copier.StatusAlready, "Kafka has no commit, as before the copy"
	case e.Offset == nil:
		it.Status = copier.StatusBlocked
		it.Reason = fmt.Sprintf("not restorable: Kafka had no commit before the copy, and an offset commit cannot remove one "+
			"(kafka-consumer-groups --delete-offsets --group %s --topic %s:%d does, with the group stopped)", e.Group, e.Topic, e.Partition)
	case it.Current != nil && *it.Current == *e.Offset:
		// Before the moved-since check: a copy stopped or failed before its commit left Kafka
		// at kafka_before, which is not a move to undo, and --force would be the only way past it.
		it.Status, it.Reason = copier.StatusAlready, "Kafka already holds it"
	case e.Expect != nil && !sameOffset(it.Current, e.Expect) && !opts.Force:
		it.Status = copier.StatusBlocked
		it.Reason = fmt.Sprintf("Kafka is at %s, not at %d as the copy left it: it moved since the copy, and restoring "+
			"would discard those commits (--force restores anyway)", show(it.Current), *e.Expect)
	case !ti.Exists:
		it.Status, it.Reason = copier.StatusBlocked, fmt.Sprintf("topic %q does not exist in Kafka", e.Topic)
	case !hasPart:
		it.Status, it.Reason = copier.StatusBlocked, fmt.Sprintf("topic %q has no partition %d in Kafka", e.Topic, e.Partition)
	case *e.Offset < r.LogStart || *e.Offset > r.LogEnd:
		it.Status = copier.StatusBlocked
		it.Reason = fmt.Sprintf("offset %d is outside the partition's log [%d, %d]", *e.Offset, r.LogStart, r.LogEnd)
	default:
		it.Status, it.Reason = copier.StatusWouldWrite, direction("Kafka", it.Current, *e.Offset)
	}
	return nil
}

// newPaddedName reports whether the group, or the topic within it, has a name that begins or
// ends with white space and that ZooKeeper does not hold yet (zk: the group's znodes).
func newPaddedName(group, topic string, zk []migrate.LegacyOffset) bool {
	padded := func(name string) bool { return strings.TrimSpace(name) != name }
	switch {
	case padded(group) && len(zk) == 0:
		return true
	case padded(topic):
		return !slices.ContainsFunc(zk, func(o migrate.LegacyOffset) bool { return o.Topic == topic })
	}
	return false
}

func planZK(it *Item, group string, cur Current, opts Options) {
	for _, name := range []string{group, it.Topic} {
		if strings.ContainsRune(name, '/') || name == "." || name == ".." {
			it.Status, it.Reason = copier.StatusBlocked, fmt.Sprintf("%q cannot be a znode name", name)
			return
		}
	}
	var found []migrate.LegacyOffset
	for _, o := range cur.ZK {
		if o.Topic == it.Topic && o.Partition == it.Partition {
			found = append(found, o)
		}
	}
	switch {
	case len(found) > 1:
		it.Status, it.Reason = copier.StatusBlocked, fmt.Sprintf("%d znodes name this partition: fix ZooKeeper first", len(found))
		return
	case len(found) == 1:
		o := found[0]
		it.CurrentZnode, it.CurrentMtime = o.Path, o.Mtime
		if o.Invalid != "" {
			it.CurrentInvalid = o.Invalid
		} else {
			it.Current = ptr(o.Offset)
		}
	}
	switch {
	case it.Offset == nil:
		it.Status, it.Reason = copier.StatusBlocked, "the file gives no offset"
	case it.Current != nil && *it.Current == *it.Offset:
		it.Status, it.Reason = copier.StatusAlready, "ZooKeeper already holds it"
	case len(found) == 0 && !opts.Force && newPaddedName(group, it.Topic, cur.ZK):
		// Legal, and carried by this tool's own files, but a name ZooKeeper does not know yet
		// is most likely a hand-edited CSV ("g, t,0,5"): restored, " t" was a new znode beside
		// t, the table showing no space.
		it.Status, it.Reason = copier.StatusBlocked, fmt.Sprintf("group %q topic %q: a name with spaces around it that "+
			"ZooKeeper does not have: a slip in the file? (--force creates it)", group, it.Topic)
	case it.CurrentInvalid != "":
		it.Status, it.Reason = copier.StatusWouldWrite, fmt.Sprintf("replaces an invalid znode (%s) with %d", it.CurrentInvalid, *it.Offset)
	default:
		it.Status, it.Reason = copier.StatusWouldWrite, direction("ZooKeeper", it.Current, *it.Offset)
	}
}

func direction(store string, cur *int64, to int64) string {
	switch {
	case cur == nil:
		return fmt.Sprintf("%s has none: write %d", store, to)
	case to < *cur:
		return fmt.Sprintf("%s %d: write %d (BACKWARDS by %d)", store, *cur, to, *cur-to)
	default:
		return fmt.Sprintf("%s %d: write %d (forwards by %d)", store, *cur, to, to-*cur)
	}
}

func gateReason(g Group) string {
	var parts []string
	for _, gate := range g.Gates {
		switch gate {
		case migrate.GateLegacyConsumersAlive:
			parts = append(parts, fmt.Sprintf("%s (%d live legacy consumers)", gate, len(g.LiveConsumers)))
		case migrate.GateKafkaGroupActive:
			parts = append(parts, fmt.Sprintf("%s (Kafka group %s, %d members)", gate, g.KafkaState, g.KafkaMembers))
		}
	}
	return "blocked by " + strings.Join(parts, " and ")
}

func sameOffset(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(v *int64) string {
	if v == nil {
		return "no commit"
	}
	return fmt.Sprint(*v)
}
