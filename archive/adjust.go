package archive

import (
	"fmt"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// ForTarget returns the file's entries as the target store reads offsets, and the
// --offset-adjust the written offsets carry (recorded in the commits' provenance, where verify
// reads it back).
//
// An adjust N says the legacy client's znodes hold the Kafka offset minus N, so it applies only
// between the two stores: into Kafka, a ZooKeeper export's znode values get +N (an export that
// applied its adjust already is written as it is); into ZooKeeper, Kafka offsets (an export of
// Kafka, a CSV) get -N, and an adjusted ZooKeeper export goes back to its znode values. Anything
// else (adjusting Kafka's own offsets into Kafka, adjusting twice, two different adjusts) is
// refused, so an offset is never shifted by accident.
func (f File) ForTarget(to Target, adjust int64) (File, int64, error) {
	zkExport := f.Source == SourceZK && f.Format == FormatJSON
	var shift, recorded int64
	switch {
	case to == TargetKafka && adjust != 0 && !zkExport:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d: the file holds Kafka offsets (%s), not ZooKeeper znode values; only a ZooKeeper export is adjusted into Kafka", adjust, f.describe())
	case to == TargetKafka && adjust != 0 && f.Adjust != 0:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d: the export already applied --offset-adjust %+d to its offsets", adjust, f.Adjust)
	case to == TargetKafka:
		shift, recorded = adjust, f.Adjust+adjust
	case f.Format == FormatBackup && adjust != 0:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d: %s is not restored into ZooKeeper", adjust, f.describe())
	case zkExport && adjust != 0 && adjust != f.Adjust:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d with --to zk: the export holds znode values (its recorded adjust is %+d, which is taken off by itself)", adjust, f.Adjust)
	case zkExport:
		shift = -f.Adjust
	default: // Kafka offsets into ZooKeeper: the client's znodes are N below
		shift = -adjust
	}
	if shift == 0 {
		return f, recorded, nil
	}
	out := f
	out.Entries = make([]Entry, len(f.Entries))
	for i, e := range f.Entries {
		if e.Offset != nil {
			if !adjustable(*e.Offset, shift) {
				return File{}, 0, fmt.Errorf("line %d: %s offset %d shifted by %+d is not a valid offset", e.Line, e.Key, *e.Offset, shift)
			}
			e.Offset = ptr(*e.Offset + shift)
		}
		out.Entries[i] = e
	}
	if zkExport {
		out.Adjust = f.Adjust + shift
	}
	return out, recorded, nil
}

// describe names the kind of file in messages.
func (f File) describe() string {
	switch {
	case f.Format == FormatBackup:
		return "a copy's backup"
	case f.Format == FormatCSV:
		return "a consumer-groups CSV"
	default:
		return "an export of " + string(f.Source)
	}
}

// adjustable reports whether off+adj is a valid offset (migrate.AdjustOffset).
func adjustable(off, adj int64) bool {
	_, ok := migrate.AdjustOffset(off, adj)
	return ok
}
