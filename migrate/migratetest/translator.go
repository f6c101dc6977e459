package migratetest

import (
	"fmt"
	"strings"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Translator is a migrate.Translator for unit tests: the target names a source topic t
// Prefix+t, and replicates each partition of Start from its Start offset on, record for record
// at target offset off-Start; an offset below Start is below the first sync, one above Behind
// (when set) is replication-behind, a partition missing from Start has no sync; Reread is a
// partition's announced re-read bound (as a sync below rounds down). It passes
// contract.TestTranslator as mm2log's translator does.
type Translator struct {
	Prefix string
	Start  map[migrate.TopicPartition]int64
	Behind map[migrate.TopicPartition]int64
	Reread map[migrate.TopicPartition]int64
}

func (f Translator) Topic(source string) string { return f.Prefix + source }

func (f Translator) Source(target string) (string, bool) { return strings.CutPrefix(target, f.Prefix) }

func (f Translator) Translate(_ string, tp migrate.TopicPartition, off int64) migrate.Placement {
	start, ok := f.Start[tp]
	switch {
	case !ok:
		return migrate.Placement{Blocked: migrate.ClassNoSync, Reason: fmt.Sprintf("no offset sync for %s", tp)}
	case off < start:
		return migrate.Placement{Blocked: migrate.ClassBelowFirstSync, Reason: fmt.Sprintf("offset %d is below the first sync %d", off, start)}
	}
	if b, ok := f.Behind[tp]; ok && off > b {
		return migrate.Placement{Blocked: migrate.ClassReplicationBehind, Reason: fmt.Sprintf("offset %d is past the replication at %d", off, b)}
	}
	return migrate.Placement{Offset: off - start, MaxReread: f.Reread[tp]}
}
