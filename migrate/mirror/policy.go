package mirror

import (
	"errors"
	"fmt"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// policyDefaults fills the names of p left empty with migrate.DefaultPolicy's.
func policyDefaults(p migrate.Policy) migrate.Policy {
	d := migrate.DefaultPolicy()
	if p.OnConflict == "" {
		p.OnConflict = d.OnConflict
	}
	if p.OutOfRange == "" {
		p.OutOfRange = d.OutOfRange
	}
	return p
}

// ErrPolicy is what CheckPolicy's refusals wrap.
var ErrPolicy = errors.New("policy not allowed for dual-commit")

// CheckPolicy checks p for dual-commit (empty names are migrate.DefaultPolicy's): plan's names,
// less the ones a mirror cannot keep its promise under. --on-conflict=zk writes ZooKeeper's
// offset where Kafka is ahead: Kafka backwards, which the mirror never does. --offset-adjust
// with reverse: the reverse mirror writes Kafka's offsets into ZooKeeper as they are, so the
// legacy consumers would resume |N| offsets off after a rollback.
func CheckPolicy(p migrate.Policy, reverse bool) error {
	p = policyDefaults(p)
	if err := p.Validate(); err != nil {
		return err
	}
	if p.OnConflict == migrate.ConflictZK {
		return fmt.Errorf("%w: --on-conflict=zk would move Kafka backwards wherever it is ahead of ZooKeeper, "+
			"and dual-commit never moves an offset backwards: use max (the default), kafka or fail", ErrPolicy)
	}
	if reverse && p.OffsetAdjust != 0 {
		return fmt.Errorf("%w: --offset-adjust %+d with --reverse: the reverse mirror writes Kafka's offsets into "+
			"ZooKeeper unadjusted, so a rollback would resume %d offsets off; run --reverse without --offset-adjust",
			ErrPolicy, p.OffsetAdjust, p.OffsetAdjust)
	}
	return nil
}
