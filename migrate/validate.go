package migrate

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// validFingerprint reports whether s has the form Fingerprint returns: sha256:<64 hex digits>.
func ValidFingerprint(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	return strings.Trim(hex, "0123456789abcdef") == ""
}

// actionsByClass lists the actions Build can give each class. A plan file is read back by copy
// and then trusted to write offsets, so a hand-edited combination Build never produces (an
// "equal" entry that writes, a missing topic that writes) is rejected.
func actionsByClass(c Class) []Action {
	switch c {
	case ClassEqual:
		return []Action{ActionSkip}
	case ClassZKOnly:
		return []Action{ActionWrite, ActionBlock}
	case ClassZKAhead, ClassKafkaAhead, ClassBelowLogStart, ClassAboveLogEnd:
		return []Action{ActionWrite, ActionSkip, ActionBlock}
	case ClassTopicMissing, ClassPartitionMissing, ClassInvalidZnode, ClassNoSync, ClassBelowFirstSync, ClassReplicationBehind:
		return []Action{ActionBlock}
	}
	return nil
}

// Validate checks that p is a plan Build could have produced: the schema version, known
// policy, class, action and gate names, unique groups and partitions, and for every write an
// offset that is present, not negative, not in a gated group, and not backwards unless the
// policy says --on-conflict=zk. Errors name the group, topic and partition.
func (p Plan) Validate() error {
	if err := p.ValidateHead(); err != nil {
		return err
	}
	if !ValidFingerprint(p.Fingerprint) {
		return fmt.Errorf("plan fingerprint %q is not of the form sha256:<64 hex digits>", p.Fingerprint)
	}
	groups := map[string]bool{}
	for _, g := range p.Groups {
		if g.Group == "" {
			return fmt.Errorf("plan has a group with an empty name")
		}
		if groups[g.Group] {
			return fmt.Errorf("group %q appears twice in the plan", g.Group)
		}
		groups[g.Group] = true
		if err := validateKafkaGroup(g, p.Filter); err != nil {
			return err
		}
		if err := validateGroup(g, p.Policy); err != nil {
			return err
		}
	}
	return nil
}

// ValidateHead checks what Validate checks of the fields other than the groups and the
// fingerprint: a streamed plan has them first, and the rest only at its end.
func (p Plan) ValidateHead() error {
	if p.SchemaVersion != PlanSchemaVersion {
		return fmt.Errorf("plan schema_version %d is not supported, expected %d (or 1, from an earlier zk2kafka: its plan files are read too)",
			p.SchemaVersion, PlanSchemaVersion)
	}
	if err := p.Policy.Validate(); err != nil {
		return fmt.Errorf("plan policy: %w", err)
	}
	if p.CreatedAt.IsZero() {
		return fmt.Errorf("plan has no created_at")
	}
	if p.Retention < 0 {
		return fmt.Errorf("plan offsets_retention %s is negative", time.Duration(p.Retention))
	}
	if _, err := NewFilterFromSpec(p.Filter); err != nil {
		return fmt.Errorf("plan filter: %w", err)
	}
	return nil
}

// GroupOrder checks a streamed plan's groups: each valid under Policy and Filter, and named
// after the one before, as Build orders them, so a repeated group is found without
// remembering every name.
type GroupOrder struct {
	Policy Policy
	Filter FilterSpec
	prev   string
}

// Check checks g, the group after the ones checked before.
func (o *GroupOrder) Check(g GroupPlan) error {
	switch {
	case g.Group == "":
		return fmt.Errorf("plan has a group with an empty name")
	case o.prev != "" && g.Group == o.prev:
		return fmt.Errorf("group %q appears twice in the plan", g.Group)
	case o.prev != "" && g.Group < o.prev:
		return fmt.Errorf("group %q comes after group %q: a plan lists its groups in name order; edited after it was saved?", g.Group, o.prev)
	}
	o.prev = g.Group
	if err := validateKafkaGroup(g, o.Filter); err != nil {
		return err
	}
	return validateGroup(g, o.Policy)
}

// validateKafkaGroup checks a group's kafka_group against the plan's group map: a file edited
// to send a group elsewhere than its map says is refused (the fingerprint covers the map, not
// the groups' copies of it).
func validateKafkaGroup(g GroupPlan, f FilterSpec) error {
	want := f.KafkaGroup(g.Group)
	switch {
	case g.KafkaGroup == g.Group:
		return fmt.Errorf("group %q: kafka_group %q is the group itself: it is left out then", g.Group, g.KafkaGroup)
	case g.Kafka() != want:
		return fmt.Errorf("group %q: kafka_group %q, but the plan's group map sends it to %q", g.Group, g.KafkaGroup, want)
	}
	return nil
}

func validateGroup(g GroupPlan, pol Policy) error {
	if g.KafkaMembers < 0 {
		return fmt.Errorf("group %q: kafka_members %d is negative", g.Group, g.KafkaMembers)
	}
	for i, gate := range g.Gates {
		if !slices.Contains(Gates(), gate) {
			return fmt.Errorf("group %q: unknown gate %q", g.Group, gate)
		}
		if slices.Contains(g.Gates[:i], gate) {
			return fmt.Errorf("group %q: gate %q appears twice", g.Group, gate)
		}
	}
	type key struct {
		tp    TopicPartition
		znode string
	}
	keys := map[key]bool{}
	znodes := map[string]bool{}
	for _, e := range g.Entries {
		if err := validateEntry(e, len(g.Gates) > 0, pol); err != nil {
			return fmt.Errorf("group %q topic %q partition %d: %w", g.Group, e.Topic, e.Partition, err)
		}
		// Build blocks every znode of a partition named twice, so only invalid entries may
		// share a partition, and then only with distinct znodes.
		k := key{tp: TopicPartition{e.Topic, e.Partition}}
		if e.Class == ClassInvalidZnode {
			k.znode = e.Znode
		}
		if keys[k] || (e.Znode != "" && znodes[e.Znode]) {
			return fmt.Errorf("group %q topic %q partition %d: appears twice in the plan (znode %q)",
				g.Group, e.Topic, e.Partition, e.Znode)
		}
		keys[k] = true
		znodes[e.Znode] = e.Znode != ""
	}
	return nil
}

func validateEntry(e Entry, gated bool, pol Policy) error {
	if err := validateClassAction(e); err != nil {
		return err
	}
	if err := validateOffsets(e); err != nil {
		return err
	}
	if e.Action != ActionWrite {
		return nil
	}
	return validateWrite(e, gated, pol)
}

// validateClassAction checks an entry's names: its class, its action, and that the class
// allows the action.
func validateClassAction(e Entry) error {
	// An unlistable offsets folder is reported as an invalid-znode entry without a topic.
	if e.Topic == "" && e.Class != ClassInvalidZnode {
		return fmt.Errorf("empty topic name")
	}
	allowed := actionsByClass(e.Class)
	switch {
	case allowed == nil:
		return fmt.Errorf("unknown class %q", e.Class)
	case !slices.Contains(Actions(), e.Action):
		return fmt.Errorf("unknown action %q", e.Action)
	case !slices.Contains(allowed, e.Action):
		return fmt.Errorf("action %q is not possible for class %q", e.Action, e.Class)
	}
	return nil
}

// validateOffsets checks an entry's numbers: present as its class needs them, never negative,
// and a log range that is one.
func validateOffsets(e Entry) error {
	switch {
	case e.Partition < 0 && e.Class != ClassInvalidZnode:
		return fmt.Errorf("negative partition")
	case e.Class == ClassInvalidZnode && e.ZK != nil:
		return fmt.Errorf("an invalid znode has no zk_offset")
	case e.Class != ClassInvalidZnode && e.ZK == nil && !(e.Source != nil && e.Action == ActionBlock):
		// A translated offset that was not placed in the target's log has none there.
		return fmt.Errorf("class %q needs a zk_offset", e.Class)
	case e.ZK != nil && *e.ZK < 0:
		return fmt.Errorf("zk_offset %d is negative", *e.ZK)
	case e.Kafka != nil && *e.Kafka < 0:
		return fmt.Errorf("kafka_offset %d is negative", *e.Kafka)
	case (e.LogStart == nil) != (e.LogEnd == nil):
		return fmt.Errorf("log_start and log_end must be given together")
	case e.LogStart != nil && (*e.LogStart < 0 || *e.LogEnd < *e.LogStart):
		return fmt.Errorf("invalid log range %d..%d", *e.LogStart, *e.LogEnd)
	case e.Target < 0:
		return fmt.Errorf("target %d is negative", e.Target)
	}
	return validateSource(e)
}

// validateSource checks a translated entry's source, and that only a translated entry has a
// class of translation.
func validateSource(e Entry) error {
	s := e.Source
	switch {
	case s != nil && (s.Topic == "" || s.Offset < 0 || s.MaxReread < 0):
		return fmt.Errorf("source %q offset %d max_reread %d: a topic and no negative number", s.Topic, s.Offset, s.MaxReread)
	case s == nil && (e.Class == ClassNoSync || e.Class == ClassBelowFirstSync || e.Class == ClassReplicationBehind):
		return fmt.Errorf("class %q is of a translated offset, and the entry has no source", e.Class)
	}
	return nil
}

// validateWrite checks the one action that changes Kafka: allowed over what Kafka holds, and
// to the target the class decides.
func validateWrite(e Entry, gated bool, pol Policy) error {
	if err := validateOverKafka(e, gated, pol); err != nil {
		return err
	}
	return validateTarget(e, pol)
}

// validateOverKafka checks a write against Kafka's commit: none in a gated group, none without
// the commit its class names, and none that moves Kafka where on_conflict forbids.
func validateOverKafka(e Entry, gated bool, pol Policy) error {
	switch {
	case gated:
		return fmt.Errorf("write in a gated group")
	case e.Class == ClassZKOnly && e.Kafka != nil:
		return fmt.Errorf("class zk-only with a kafka_offset")
	case e.Class != ClassZKOnly && e.Kafka == nil && e.Class != ClassBelowLogStart && e.Class != ClassAboveLogEnd:
		return fmt.Errorf("class %q needs a kafka_offset", e.Class)
	case e.Kafka == nil:
		return nil
	case e.Target == *e.Kafka:
		return fmt.Errorf("write of target %d equal to the kafka_offset", e.Target)
	case e.Target < *e.Kafka && pol.OnConflict != ConflictZK:
		return fmt.Errorf("write moves Kafka backwards from %d to %d, but on_conflict is %q", *e.Kafka, e.Target, pol.OnConflict)
	case e.Target > *e.Kafka && pol.OnConflict != ConflictZK && pol.OnConflict != ConflictMax:
		return fmt.Errorf("write over kafka_offset %d, but on_conflict is %q", *e.Kafka, pol.OnConflict)
	}
	return nil
}

// validateTarget checks a write's target: the log bound for a clamped out-of-range offset,
// else the ZooKeeper offset itself, inside the log.
func validateTarget(e Entry, pol Policy) error {
	if e.Class == ClassBelowLogStart || e.Class == ClassAboveLogEnd {
		if pol.OutOfRange != RangeClamp || e.LogStart == nil {
			return fmt.Errorf("write of an out-of-range offset needs out_of_range clamp and the log range")
		}
		if (e.Class == ClassBelowLogStart && e.Target != *e.LogStart) || (e.Class == ClassAboveLogEnd && e.Target != *e.LogEnd) {
			return fmt.Errorf("clamped target %d is not the log bound", e.Target)
		}
		return nil
	}
	if e.Target != *e.ZK {
		return fmt.Errorf("target %d differs from zk_offset %d", e.Target, *e.ZK)
	}
	if e.LogStart != nil && (e.Target < *e.LogStart || e.Target > *e.LogEnd) {
		return fmt.Errorf("target %d is outside the log %d..%d", e.Target, *e.LogStart, *e.LogEnd)
	}
	return nil
}
