package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

// dataDirOptions are the flags of the legacy store over a copy of ZooKeeper's data directory
// (package zkreader/datadir): CI dry runs from a backup, and rescue after the ensemble is gone.
type dataDirOptions struct {
	path   string
	chroot string
	zxid   string
}

func (o *dataDirOptions) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&o.path, "zk-data-dir", "", "read the legacy offsets from a copy of ZooKeeper's data directory (its dataDir, the version-2 folder, or one snapshot file) instead of --zk")
	f.StringVar(&o.chroot, "zk-chroot", "", "with --zk-data-dir: the chroot the legacy consumers used (the /chroot part of their connect string)")
	f.StringVar(&o.zxid, "zk-zxid", "", "with --zk-data-dir: read the tree as it was at this zxid (decimal or 0x hex) instead of at the last complete transaction")
}

// check refuses --zk-data-dir with --zk, and its companions without it.
func (o *dataDirOptions) check(servers string) error {
	if o.path == "" {
		for name, set := range map[string]bool{"zk-chroot": o.chroot != "", "zk-zxid": o.zxid != ""} {
			if set {
				return fmt.Errorf("--%s applies only with --zk-data-dir", name)
			}
		}
		return nil
	}
	if servers != "" {
		return fmt.Errorf("--zk-data-dir and --zk (%s) are exclusive: the offsets come from one legacy store (unset ZK2KAFKA_ZK or zk: in --config to read the data directory)", servers)
	}
	return nil
}

// checkDataDirWrite is the condition of a write into Kafka from a data directory (copy, restore
// --to kafka): the legacy consumers cannot be seen running (no live sessions), so the operator
// must say they are stopped.
func (g *globalOptions) checkDataDirWrite() error {
	if g.zkData.path != "" && !g.legacyStopped {
		return errors.New("writing into Kafka from --zk-data-dir (copy, restore --to kafka) needs --legacy-stopped: a data directory has no live sessions, so zk2kafka cannot see " +
			"whether the legacy consumers still run; stop them, then say so with --legacy-stopped (nothing was written)")
	}
	return nil
}

// errDataDirDualCommit is dual-commit's refusal: it follows a live ensemble's changes.
var errDataDirDualCommit = errors.New("dual-commit mirrors a running ZooKeeper and watches it for changes: a data directory (--zk-data-dir) " +
	"never changes; use --zk with the live ensemble, or migrate copy --zk-data-dir --legacy-stopped for a one-time copy")

// openDataDir opens the data-directory store and says on stderr what it read.
func openDataDir(ctx context.Context, g *globalOptions, d *deps) (migrate.LegacyStore, func(), error) {
	o := &g.zkData
	var zxid int64
	if o.zxid != "" {
		z := strings.TrimSpace(o.zxid)
		base := 10 // not Go's prefixes: "010" is ten, "1_000" is a typo
		if h, ok := strings.CutPrefix(strings.ToLower(z), "0x"); ok {
			z, base = h, 16
		}
		v, err := strconv.ParseInt(z, base, 64)
		if err != nil || v <= 0 {
			return nil, nil, fmt.Errorf("--zk-zxid: %q is not a positive zxid (decimal or 0x hex)", o.zxid)
		}
		zxid = v
	}
	s, err := datadir.Open(ctx, datadir.Config{Path: o.path, Chroot: o.chroot, Zxid: zxid, IgnoreRegistrations: g.legacyStopped})
	if err != nil {
		return nil, nil, fmt.Errorf("zookeeper data directory: %w; nothing was read or written", err)
	}
	info := s.Info()
	for _, w := range info.Warnings {
		d.logger.Warn("zookeeper data directory: " + w)
	}
	fmt.Fprintf(d.stderr, "zk2kafka: read %s\n", describeDataDir(info, time.Now()))
	if info.Registrations > 0 {
		if g.legacyStopped {
			fmt.Fprintf(d.stderr, "zk2kafka: %d legacy consumer registrations (ids/owners) in the copy are ignored: --legacy-stopped\n", info.Registrations)
		} else {
			fmt.Fprintf(d.stderr, "zk2kafka: %d legacy consumer registrations (ids/owners) in the copy are shown as live: they were registered at zxid %#x; "+
				"--legacy-stopped says they are stopped\n", info.Registrations, info.Zxid)
		}
	}
	return s, s.Close, nil
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

// copyingFromDataDir says, before copy writes anything, how old the offsets it writes are.
func copyingFromDataDir(d *deps, legacy migrate.LegacyStore) {
	if s, ok := legacy.(*datadir.Store); ok {
		info := s.Info()
		age := "unknown"
		if !info.LastTxn.IsZero() {
			age = time.Since(info.LastTxn).Round(time.Second).String()
		}
		fmt.Fprintf(d.stderr, "zk2kafka: copy writes the offsets of a ZooKeeper data directory at zxid %#x: they are %s old\n", info.Zxid, age)
	}
}
