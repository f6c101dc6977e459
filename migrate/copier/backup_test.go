package copier_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// TestCreateBackup: the header is on disk when CreateBackup returns (the file and, since it is
// new, its directory entry are synced: a crash can no longer lose it), an existing file is never
// overwritten, and a missing directory fails before anything is written.
func TestCreateBackup(t *testing.T) {
	cases := []struct {
		name    string
		path    func(dir string) string
		wantErr string
	}{
		{name: "new file gets its header", path: func(dir string) string { return filepath.Join(dir, "backup.jsonl") }},
		{name: "existing file is refused", wantErr: "file exists", path: func(dir string) string {
			p := filepath.Join(dir, "backup.jsonl")
			if err := os.WriteFile(p, []byte("keep\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "missing directory is refused", wantErr: "no such file", path: func(dir string) string { return filepath.Join(dir, "gone", "backup.jsonl") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t.TempDir())
			b, err := copier.CreateBackup(path, "fp", time.Unix(0, 0))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Record(context.Background(), []copier.GroupResult{{Group: "g", Partitions: []copier.PartitionResult{{Topic: "t", Target: 5}}}}); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			var h copier.BackupHeader
			if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &h) != nil || h.Backup != copier.BackupSchemaVersion || h.Fingerprint != "fp" {
				t.Fatalf("backup file = %q, want a header with fingerprint fp and one record", data)
			}
		})
	}
}
