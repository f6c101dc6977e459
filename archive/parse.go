package archive

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// Format is the kind of file Parse read.
type Format string

const (
	FormatJSON   Format = "json"   // an export document
	FormatCSV    Format = "csv"    // group,topic,partition,offset lines, or topic,partition,offset for one group
	FormatBackup Format = "backup" // a copy's backup file (migrate.BackupRecord JSON lines)
)

// Entry is one offset of a parsed file.
type Entry struct {
	migrate.Key
	// Offset is the offset to put back. Nil only in a backup: Kafka had no commit before the
	// copy, which an offset commit cannot express.
	Offset *int64
	// Expect is set for a backup: the offset the copy wrote, which Kafka should still hold.
	Expect *int64
	// Mtime is the znode's mtime of a ZooKeeper export, zero otherwise.
	Mtime time.Time
	// Line is where the entry starts in the file (1-based).
	Line int
	// KafkaGroup is the export's kafka_group of the offset (File.GroupMap), "" when none.
	KafkaGroup string
}

// File is a parsed file.
type File struct {
	Format Format
	// Source is the store the offsets came from: zk or kafka for an export, kafka for a
	// backup, "" for a CSV.
	Source Source
	// Adjust is the --offset-adjust a ZooKeeper export applied to its offsets (0 otherwise).
	Adjust  int64
	Entries []Entry
	// GroupMap is the legacy -> Kafka group of an export --from kafka made under a group map
	// (its offsets' kafka_group); nil otherwise.
	GroupMap migrate.GroupMap
	// Recorded is the group map a ZooKeeper export was made under (its filter.group_map): a
	// restore --to kafka given no map follows it.
	Recorded migrate.GroupMap
}

// maxErrors bounds the problems one error lists: enough to fix a file, not a wall of text.
const maxErrors = 20

// Parse reads an export document, a consumer-groups CSV or a copy backup, telling them apart by
// their first line. It is strict: unknown or repeated keys, missing fields, negative or
// non-integer numbers, a partition named twice, a torn last line are all errors, each with its
// line number, and any error means no entry at all is returned.
func Parse(data []byte) (File, error) { return ParseFor(data, nil) }

// ParseFor is Parse for a run selecting the groups named (--group): with exactly one, a CSV of
// topic,partition,offset lines, the form Kafka's consumer-groups tool takes with one --group,
// holds that group's offsets. Without exactly one, that form is an error saying so: whose
// offsets the lines are is never guessed.
func ParseFor(data []byte, groups []string) (File, error) {
	body := bytes.TrimPrefix(data, []byte("\uFEFF"))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return File{}, errors.New("the file is empty")
	}
	var (
		f    File
		errs errList
	)
	switch {
	case trimmed[0] != '{':
		f = parseCSV(body, groups, &errs)
	case copier.IsBackup(body):
		f = parseBackup(body, &errs)
	default:
		f = parseExport(body, &errs)
	}
	if errs.none() {
		checkDuplicates(f.Entries, &errs)
	}
	if err := errs.err(); err != nil {
		return File{}, err
	}
	return f, nil
}

// errList collects problems by line.
type errList struct {
	msgs []string
	more int
}

func (l *errList) add(line int, format string, args ...any) {
	if len(l.msgs) >= maxErrors {
		l.more++
		return
	}
	l.msgs = append(l.msgs, fmt.Sprintf("line %d: %s", line, fmt.Sprintf(format, args...)))
}

func (l *errList) none() bool { return len(l.msgs) == 0 }

func (l *errList) err() error {
	if l.none() {
		return nil
	}
	msg := strings.Join(l.msgs, "\n  ")
	if l.more > 0 {
		msg += fmt.Sprintf("\n  ... and %d more", l.more)
	}
	if len(l.msgs) > 1 {
		msg = fmt.Sprintf("%d problems:\n  %s", len(l.msgs)+l.more, msg)
	}
	return errors.New(msg)
}

// checkEntry validates the fields every format shares and appends the entry.
func checkEntry(f *File, errs *errList, e Entry) {
	bad := false
	if err := checkName("group", e.Group); err != nil {
		errs.add(e.Line, "%v", err)
		bad = true
	}
	if err := checkName("topic", e.Topic); err != nil {
		errs.add(e.Line, "%v", err)
		bad = true
	}
	for _, v := range []struct {
		name string
		v    *int64
	}{{"partition", ptr(int64(e.Partition))}, {"offset", e.Offset}, {"target", e.Expect}} {
		if v.v != nil && *v.v < 0 {
			errs.add(e.Line, "%s %d is negative", v.name, *v.v)
			bad = true
		}
	}
	if !bad {
		f.Entries = append(f.Entries, e)
	}
}

// checkName refuses names no store can hold: empty, invalid UTF-8, control characters. A '/'
// is fine in a Kafka group name; PlanRestore refuses it for ZooKeeper. Spaces around a name are
// legal in both stores (a group.id read from a .properties file keeps its trailing blanks), and
// this tool's own exports and backups carry them: PlanRestore holds back only a new znode so
// named, the likely slip of a hand-edited CSV.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s name", what)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s name %q is not valid UTF-8", what, s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%s name %q contains a control character", what, s)
	}
	return nil
}

// checkDuplicates refuses a partition given twice: which of the two is meant cannot be guessed.
func checkDuplicates(entries []Entry, errs *errList) {
	first := make(map[migrate.Key]int, len(entries))
	for _, e := range entries {
		if l, dup := first[e.Key]; dup {
			errs.add(e.Line, "group %q topic %q partition %d is already given on line %d", e.Group, e.Topic, e.Partition, l)
			continue
		}
		first[e.Key] = e.Line
	}
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = max(0, min(off, int64(len(data))))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

func ptr[T any](v T) *T { return &v }
