package e2e_test

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/archive"
	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// TestCopyRefusesUnwritableBackup runs `copy --execute` with a backup path that cannot take
// the backup: a read-only folder, a disk full from the start, a disk that fills after a few
// batches (a file size limit, RLIMIT_FSIZE, set on the real process). Kafka must receive no
// offset that is not fully recorded in the backup first, the run must exit 1 naming the backup
// file, and what the backup holds must still be a file restore can read.
func TestCopyRefusesUnwritableBackup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup returns the backup path and the wrapper the process runs through.
		setup     func(t *testing.T, dir string) (string, []string)
		wantInErr string
		partial   bool // some batches may be written before the disk fills
		noFile    bool // no backup file may be left behind
	}{
		{name: "read-only folder", setup: readOnlyDir, wantInErr: "create backup file"},
		{name: "disk full at the header", setup: fileLimit("0"), wantInErr: "file too large", noFile: true},
		{name: "disk full after some batches", setup: fileLimit("4"), wantInErr: "file too large", partial: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			fs := e.seedFaultSet(seed.Spec{Seed: 5, Groups: 12, TopicsPerGroup: 1, Topics: 1, Partitions: 2, Records: 30})
			backup, wrap := c.setup(t, t.TempDir())
			r := e.startCLI(e.ctx(), wrap, "migrate", "copy", "--execute", "--backup", backup, "--batch-groups", "1").wait()
			if r.code != 1 || !strings.Contains(r.stderr, c.wantInErr) || !strings.Contains(r.stderr, backup) ||
				!strings.Contains(r.stderr, "nothing") {
				t.Errorf("want exit 1 naming %s, %q and what was not written\n%s", backup, c.wantInErr, r)
			}
			now := e.kafkaSnapshot(fs.groups)
			var recs []copier.BackupRecord
			if data, err := os.ReadFile(backup); err == nil {
				f, perr := archive.Parse(data)
				if perr != nil {
					t.Fatalf("the backup left by the failed run cannot be read back for a restore: %v\n%q", perr, data)
				}
				_, recs = readBackup(t, backup)
				t.Logf("the backup holds %d records in %d bytes (%d restorable entries)", len(recs), len(data), len(f.Entries))
				if c.noFile {
					t.Errorf("a backup file of %d bytes was left behind: a re-run with the same --backup would refuse it", len(data))
				}
			} else if !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			backedUp := map[migrate.Key]int64{}
			for _, rec := range recs {
				backedUp[migrate.Key{Group: rec.Group, Topic: rec.Topic, Partition: rec.Partition}] = rec.Target
			}
			if !c.partial && len(now) != 0 {
				t.Errorf("kafka holds %d offsets after a refused copy, want none: %v", len(now), now)
			}
			for k, off := range now {
				if target, ok := backedUp[k]; !ok || target != off {
					t.Errorf("kafka holds %s=%d, not recorded in the backup first", k, off)
				}
			}
			if c.partial && (len(now) == 0 || len(now) == len(fs.zk)) {
				t.Errorf("the disk filled after %d of %d offsets: the limit no longer lands mid-copy", len(now), len(fs.zk))
			}
			// With room again, a new run completes the copy.
			e.mustCLI(0, "migrate", "copy", "--execute", "--backup", e.file("backup-ok"))
			if got := e.kafkaSnapshot(fs.groups); !maps.Equal(got, fs.zk) {
				t.Errorf("after the second copy kafka differs from ZooKeeper at %d offsets, e.g. %s", countDiff(got, fs.zk), firstDiff(got, fs.zk))
			}
		})
	}
}

// readOnlyDir is a folder nobody may create files in: a read-only tmpfs when the tests run as
// root (root ignores permission bits), a mode 0500 folder otherwise.
func readOnlyDir(t *testing.T, dir string) (string, []string) {
	t.Helper()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.Chmod(ro, 0o700); err != nil {
				t.Errorf("chmod %s back: %v", ro, err)
			}
		})
		return filepath.Join(ro, "backup.jsonl"), nil
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro).CombinedOutput(); err != nil {
		t.Skipf("running as root and cannot mount a read-only tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", ro).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", ro, err, out)
		}
	})
	return filepath.Join(ro, "backup.jsonl"), nil
}

// fileLimit runs the process under `ulimit -f blocks` (512-byte blocks): a write past the
// limit fails with EFBIG, as a full disk fails with ENOSPC, and the Go runtime ignores SIGXFSZ.
func fileLimit(blocks string) func(*testing.T, string) (string, []string) {
	return func(t *testing.T, dir string) (string, []string) {
		return filepath.Join(dir, "backup.jsonl"), []string{"sh", "-c", `ulimit -f ` + blocks + ` && exec "$@"`, "sh"}
	}
}
