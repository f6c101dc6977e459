package mm2log

import (
	"fmt"

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

// Translate implements migrate.Translator.
func (t *Translator) Translate(tp migrate.TopicPartition, off int64) migrate.Placement {
	tr := t.log.Syncs[tp].Translate(off, t.lagMax)
	var class migrate.Class
	switch tr.Class {
	case mm2.Exact, mm2.RoundedDown:
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
