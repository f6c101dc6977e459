package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
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
	Group       string `json:"group"`
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
	if err := syncDir(filepath.Dir(path)); err != nil {
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
			lines = append(lines, BackupRecord{Group: g.Group, Topic: it.Topic, Partition: it.Partition, KafkaBefore: it.Before, Target: it.Target})
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
