package mm2log

import (
	"context"
	"fmt"
	"slices"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// DefaultOffsetLagMax is MirrorMaker 2's offset.lag.max when not configured.
const DefaultOffsetLagMax = 100

// Translator is migrate's Translator over the offset syncs a Read found: topics named by the
// replication policy, offsets placed by migrate/mm2's rule (exact on a sync, else rounded down
// past the sync below), what no sync covers blocked with its class.
type Translator struct {
	log    Log
	policy mm2.Policy
	lagMax int64
	// ends is the target's log end of each source partition's replica, when read
	// (WithTargetEnds).
	ends map[migrate.TopicPartition]int64
	// checkpoints are MirrorMaker 2's, when read (WithCheckpoints).
	checkpoints map[CheckpointKey]mm2.Checkpoint
}

var _ migrate.Translator = (*Translator)(nil)

// NewTranslator translates through the syncs of log under policy; lagMax is MirrorMaker 2's
// offset.lag.max (0: DefaultOffsetLagMax).
func NewTranslator(log Log, policy mm2.Policy, lagMax int64) (*Translator, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if lagMax < 0 {
		return nil, fmt.Errorf("offset.lag.max %d is negative", lagMax)
	}
	if lagMax == 0 {
		lagMax = DefaultOffsetLagMax
	}
	return &Translator{log: log, policy: policy, lagMax: lagMax}, nil
}

// Topic implements migrate.Translator.
func (t *Translator) Topic(source string) string { return t.policy.Topic(source) }

// Source implements migrate.Translator.
func (t *Translator) Source(target string) (string, bool) { return t.policy.Source(target) }

// WithTargetEnds reads, through target, the log end of the target's replica of every source
// partition the syncs name, and returns the translator that places an offset further past the
// latest sync than offset.lag.max once the target holds every record before it
// (mm2.Syncs.TranslateReplicated; MirrorMaker 2's syncs lie further apart than offset.lag.max
// at times). A partition the target lacks keeps the lag rule.
func (t *Translator) WithTargetEnds(ctx context.Context, target migrate.KafkaState) (*Translator, error) {
	seen := map[string]bool{}
	var names []string
	for tp := range t.log.Syncs {
		if n := t.policy.Topic(tp.Topic); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	out := *t
	out.ends = map[migrate.TopicPartition]int64{}
	if len(names) == 0 { // never an empty metadata request: it means "all topics"
		return &out, nil
	}
	slices.Sort(names)
	info, err := target.Topics(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("log ends of the %d replicated topics in the target: %w", len(names), err)
	}
	for tp := range t.log.Syncs {
		if r, ok := info[t.policy.Topic(tp.Topic)].Partitions[tp.Partition]; ok {
			out.ends[tp] = r.LogEnd
		}
	}
	return &out, nil
}

// WithCheckpoints returns the translator that also places a group's offset from the group's
// own checkpoint, where MirrorMaker 2 wrote one (mm2.Syncs.WithCheckpoint).
func (t *Translator) WithCheckpoints(c Checkpoints) *Translator {
	out := *t
	out.checkpoints = c.Latest
	return &out
}

// Translate implements migrate.Translator.
func (t *Translator) Translate(group string, tp migrate.TopicPartition, off int64) migrate.Placement {
	syncs := t.log.Syncs[tp]
	var tr mm2.Translation
	if end, ok := t.ends[tp]; ok {
		tr = syncs.TranslateReplicated(off, t.lagMax, end)
	} else {
		tr = syncs.Translate(off, t.lagMax)
	}
	key := CheckpointKey{Group: group, TP: migrate.TopicPartition{Topic: t.policy.Topic(tp.Topic), Partition: tp.Partition}}
	if c, ok := t.checkpoints[key]; ok {
		tr = syncs.WithCheckpoint(tr, off, c)
	}
	var class migrate.Class
	switch tr.Class {
	case mm2.Exact, mm2.RoundedDown, mm2.FromCheckpoint:
		return migrate.Placement{Offset: tr.Target, MaxReread: tr.MaxReread}
	case mm2.NoSync:
		class = migrate.ClassNoSync
	case mm2.BelowFirstSync:
		class = migrate.ClassBelowFirstSync
	case mm2.Behind:
		class = migrate.ClassReplicationBehind
	default:
		// A class migrate/mm2 gained and this switch did not: never write what it means.
		class = migrate.ClassNoSync
		tr.Reason = fmt.Sprintf("translation class %q is not known here: %s", tr.Class, tr.Reason)
	}
	return migrate.Placement{Blocked: class, Reason: fmt.Sprintf("%s (offset syncs of %s, read from %s)", tr.Reason, t.log.Topic, tp)}
}

// Syncs is how many offset syncs the translator places offsets with.
func (t *Translator) Syncs() int {
	n := 0
	for _, s := range t.log.Syncs {
		n += s.Len()
	}
	return n
}

// Checkpoints is how many checkpoints it has.
func (t *Translator) Checkpoints() int { return len(t.checkpoints) }
