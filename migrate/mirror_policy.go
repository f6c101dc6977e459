package migrate

import (
	"errors"
	"fmt"
)

// withDefaults fills the names left empty with DefaultPolicy's.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.OnConflict == "" {
		p.OnConflict = d.OnConflict
	}
	if p.OutOfRange == "" {
		p.OutOfRange = d.OutOfRange
	}
	return p
}

// ErrMirrorPolicy is what CheckMirror's refusals wrap.
var ErrMirrorPolicy = errors.New("policy not allowed for dual-commit")

// CheckMirror checks p for dual-commit (empty names are DefaultPolicy's): plan's names, less
// the ones a mirror cannot keep its promise under. --on-conflict=zk writes ZooKeeper's offset
// where Kafka is ahead: Kafka backwards, which the mirror never does. --offset-adjust with
// reverse: the reverse mirror writes Kafka's offsets into ZooKeeper as they are, so the legacy
// consumers would resume |N| offsets off after a rollback.
func (p Policy) CheckMirror(reverse bool) error {
	p = p.withDefaults()
	if err := p.Validate(); err != nil {
		return err
	}
	if p.OnConflict == ConflictZK {
		return fmt.Errorf("%w: --on-conflict=zk would move Kafka backwards wherever it is ahead of ZooKeeper, "+
			"and dual-commit never moves an offset backwards: use max (the default), kafka or fail", ErrMirrorPolicy)
	}
	if reverse && p.OffsetAdjust != 0 {
		return fmt.Errorf("%w: --offset-adjust %+d with --reverse: the reverse mirror writes Kafka's offsets into "+
			"ZooKeeper unadjusted, so a rollback would resume %d offsets off; run --reverse without --offset-adjust",
			ErrMirrorPolicy, p.OffsetAdjust, p.OffsetAdjust)
	}
	return nil
}
