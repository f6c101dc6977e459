package archive

import "fmt"

// ForTarget returns the file's entries as the target store reads offsets, and the
// --offset-adjust the written offsets carry (recorded in the commits' provenance, where verify
// reads it back).
//
// An adjust is the difference between what a legacy client kept in ZooKeeper and what Kafka
// means by a commit, so it only applies between the two stores: adjust (restore's
// --offset-adjust) turns a ZooKeeper export's znode values into Kafka offsets on the way into
// Kafka; an export that applied one already is taken back to the znode values on the way into
// ZooKeeper. Anything else (adjusting Kafka's own offsets, adjusting twice) is refused, so an
// offset is never shifted by accident.
func (f File) ForTarget(to Target, adjust int64) (File, int64, error) {
	switch {
	case adjust != 0 && to == TargetZK:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d with --to zk: a restore to ZooKeeper writes the file's values as they are (an adjusted export is taken back to its znode values by itself)", adjust)
	case adjust != 0 && (f.Source != SourceZK || f.Format != FormatJSON):
		return File{}, 0, fmt.Errorf("--offset-adjust %+d: the file holds Kafka offsets (%s), not ZooKeeper znode values; only a ZooKeeper export is adjusted", adjust, f.describe())
	case adjust != 0 && f.Adjust != 0:
		return File{}, 0, fmt.Errorf("--offset-adjust %+d: the export already applied --offset-adjust %+d to its offsets", adjust, f.Adjust)
	}
	shift, recorded := adjust, f.Adjust+adjust
	if to == TargetZK {
		shift, recorded = -f.Adjust, 0
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
	out.Adjust = f.Adjust + shift
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

// adjustable reports whether off+adj is a valid offset (not negative, no overflow).
func adjustable(off, adj int64) bool {
	sum := off + adj
	return sum >= 0 && (adj <= 0 || sum > off)
}
