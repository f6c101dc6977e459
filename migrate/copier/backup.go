package copier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/durable"
	"github.com/zk2kafka/zk2kafka/internal/strictjson"
)

// BackupSchemaVersion versions the backup file layout.
const BackupSchemaVersion = 1

// BackupHeader is the first line of a backup file.
type BackupHeader struct {
	Backup      int       `json:"zk2kafka_backup"`
	CreatedAt   time.Time `json:"created_at"`
	Fingerprint string    `json:"plan_fingerprint"`
}

// BackupRecord is one later line: the Kafka offset of a partition just before copy wrote
// Target over it (nil: Kafka had no commit). Restoring it undoes the copy.
type BackupRecord struct {
	// Group is the Kafka group the offset is of (a restore of the backup puts it back there);
	// LegacyGroup is the legacy group copied into it, when a group map renamed it.
	Group       string `json:"group"`
	LegacyGroup string `json:"legacy_group,omitempty"`
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	KafkaBefore *int64 `json:"kafka_before"`
	Target      int64  `json:"target"`
}

// FileBackup appends backup records to a JSON-lines file, fsynced before Record returns.
type FileBackup struct {
	mu   sync.Mutex
	f    *os.File
	path string
	size int64 // bytes of complete, synced lines: a failed write is cut back to it
}

// CreateBackup creates a new backup file (never overwriting one) and writes its header, so a
// full disk or read-only folder fails here, before anything is written to Kafka.
func CreateBackup(path string, fingerprint string, now time.Time) (*FileBackup, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create backup file: %w", err)
	}
	b := &FileBackup{f: f, path: path}
	if err := b.writeLines(BackupHeader{Backup: BackupSchemaVersion, CreatedAt: now.UTC(), Fingerprint: fingerprint}); err != nil {
		// An empty file would only make the re-run refuse the same path: nothing was backed up.
		return nil, errors.Join(err, f.Close(), os.Remove(path))
	}
	// The file's fsync does not make its directory entry durable: without the directory's, a
	// crash could lose the whole backup of offsets already overwritten in Kafka.
	if err := durable.SyncDir(filepath.Dir(path)); err != nil {
		return nil, errors.Join(fmt.Errorf("create backup file %s: sync directory: %w", path, err), f.Close(), os.Remove(path))
	}
	return b, nil
}

// Path is the backup file's path.
func (b *FileBackup) Path() string { return b.path }

// Record appends one line per partition about to be written and syncs the file once.
func (b *FileBackup) Record(ctx context.Context, groups []GroupResult) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var lines []any
	for _, g := range groups {
		for _, it := range g.Partitions {
			rec := BackupRecord{Group: g.Group, Topic: it.Topic, Partition: it.Partition, KafkaBefore: it.Before, Target: it.Target}
			if g.KafkaGroup != "" && g.KafkaGroup != g.Group {
				rec.Group, rec.LegacyGroup = g.KafkaGroup, g.Group
			}
			lines = append(lines, rec)
		}
	}
	return b.writeLines(lines...)
}

func (b *FileBackup) writeLines(lines ...any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var buf []byte
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("encode backup record: %w", err)
		}
		buf = append(append(buf, j...), '\n')
	}
	if _, err := b.f.Write(buf); err != nil {
		return errors.Join(fmt.Errorf("write backup file %s: %w", b.path, err), b.cutBack())
	}
	if err := b.f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync backup file %s: %w", b.path, err), b.cutBack())
	}
	b.size += int64(len(buf))
	return nil
}

// cutBack removes a partly written batch (a full disk writes part of it): those offsets are not
// committed, and a torn last line would make restore refuse the whole file.
func (b *FileBackup) cutBack() error {
	if err := b.f.Truncate(b.size); err != nil {
		return fmt.Errorf("cut backup file %s back to its last complete line: %w", b.path, err)
	}
	if _, err := b.f.Seek(b.size, io.SeekStart); err != nil {
		return fmt.Errorf("cut backup file %s back to its last complete line: %w", b.path, err)
	}
	return nil
}

// Close closes the file.
func (b *FileBackup) Close() error { return b.f.Close() }

// IsBackup reports whether the first line of body is a backup header.
func IsBackup(body []byte) bool {
	first, _, _ := bytes.Cut(body, []byte("\n"))
	var h map[string]json.RawMessage
	if json.Unmarshal(first, &h) != nil {
		return false
	}
	_, ok := h["zk2kafka_backup"]
	return ok
}

// BackupLine is one record of a backup file and the line it is on (1-based).
type BackupLine struct {
	BackupRecord
	Line int
}

// ParseBackup reads a backup file strictly: the header line, then one record per line, every
// key exact, none unknown or repeated, every one of a record present (kafka_before may be null).
// Each problem goes to report with its line, and a record with one is left out; a bad header or
// format version stops the read.
func ParseBackup(body []byte, report func(line int, msg string)) []BackupLine {
	lines := bytes.Split(body, []byte("\n"))
	if len(lines) > 1 && len(bytes.TrimSpace(lines[len(lines)-1])) == 0 {
		lines = lines[:len(lines)-1] // the newline that ends the last record
	}
	var h BackupHeader
	if _, err := strictjson.Decode(lines[0], &h, []string{"zk2kafka_backup"}, nil); err != nil {
		report(1, fmt.Sprintf("backup header: %v", err))
		return nil
	}
	if h.Backup != BackupSchemaVersion {
		report(1, fmt.Sprintf("backup format %d, this zk2kafka reads %d", h.Backup, BackupSchemaVersion))
		return nil
	}
	var out []BackupLine
	for i, l := range lines[1:] {
		n := i + 2
		if len(bytes.TrimSpace(l)) == 0 {
			report(n, "empty line in a backup file")
			continue
		}
		var r BackupRecord
		if _, err := strictjson.Decode(l, &r, backupRecordKeys, []string{"kafka_before"}); err != nil {
			if n == len(lines) && !json.Valid(l) {
				report(n, fmt.Sprintf("the last line is not a complete record (%v): a copy stopped while writing it, "+
					"so that batch was not committed; remove the line to restore the rest", err))
				continue
			}
			report(n, fmt.Sprintf("backup record: %v", err))
			continue
		}
		out = append(out, BackupLine{BackupRecord: r, Line: n})
	}
	return out
}

// backupRecordKeys are a record's keys: all of them are required but legacy_group, which a
// copy under a group map writes (and earlier versions never did).
var backupRecordKeys = slices.DeleteFunc(strictjson.FieldNames(reflect.TypeFor[BackupRecord]()),
	func(k string) bool { return k == "legacy_group" })
