package legacy

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

// openDataDir is a copy of ZooKeeper's data directory: read-only, unchanging, and its
// registrations say nothing of who runs now (the ensemble that would expire them is gone).
func openDataDir(ctx context.Context, cfg datadir.Config) (*Source, error) {
	s, err := datadir.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("zookeeper data directory: %w; nothing was read or written", err)
	}
	info := s.Info()
	src := &Source{
		Store: snapshot{s, "writing into Kafka from --zk-data-dir (copy, restore --to kafka) needs --legacy-stopped: a data directory has no live sessions, " +
			"so zk2kafka cannot see whether the legacy consumers still run"},
		ReadOnly: "--zk-data-dir is read-only: writing to ZooKeeper needs --zk and a running ensemble",
		Unchanging: "dual-commit mirrors a running ZooKeeper and watches it for changes: a data directory (--zk-data-dir) " +
			"never changes; use --zk with the live ensemble, or migrate copy --zk-data-dir --legacy-stopped for a one-time copy",
		Identity: migrate.ClusterIdentity{Chroot: cfg.Chroot}, // the servers are gone or out of reach: only the chroot is known
		Where:    "under " + path.Join("/", cfg.Chroot, "consumers"),
		Warnings: prefixed("zookeeper data directory: ", info.Warnings),
		Notes:    []string{"read " + describeDataDir(info, time.Now())},
		BeforeWrite: func() string {
			age := "unknown"
			if !info.LastTxn.IsZero() {
				age = time.Since(info.LastTxn).Round(time.Second).String()
			}
			return fmt.Sprintf("copy writes the offsets of a ZooKeeper data directory at zxid %#x: they are %s old", info.Zxid, age)
		},
		close: s.Close,
	}
	if info.Registrations > 0 {
		if cfg.IgnoreRegistrations {
			src.Notes = append(src.Notes, fmt.Sprintf("%d legacy consumer registrations (ids/owners) in the copy are ignored: --legacy-stopped", info.Registrations))
		} else {
			src.Notes = append(src.Notes, fmt.Sprintf("%d legacy consumer registrations (ids/owners) in the copy are shown as live: they were registered at zxid %#x; "+
				"--legacy-stopped says they are stopped", info.Registrations, info.Zxid))
		}
	}
	return src, nil
}

// describeDataDir is the one line that says what a data directory read gave: which snapshot,
// how far the logs went, and how old the newest change is (the age of the offsets).
func describeDataDir(info datadir.Info, now time.Time) string {
	s := fmt.Sprintf("zookeeper data directory %s: snapshot %s, %d log(s) replayed, at zxid %#x", info.Dir, info.Snapshot, len(info.Logs), info.Zxid)
	if !info.LastTxn.IsZero() {
		s += fmt.Sprintf("; last transaction %s (%s ago)", info.LastTxn.Format(time.RFC3339), now.Sub(info.LastTxn).Round(time.Second))
	}
	return s
}

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// snapshot is the data directory's store as a migrate.SnapshotStore: its registrations were
// true at the copy's zxid, with no session left to expire them. The store's other interfaces
// (the re-check, the roots) are promoted.
type snapshot struct {
	*datadir.Store
	why string
}

var _ migrate.SnapshotStore = snapshot{}

// Snapshot implements migrate.SnapshotStore.
func (s snapshot) Snapshot() string { return s.why }
