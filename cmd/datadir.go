package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

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

// config is the data directory to read; stopped is --legacy-stopped, which has its
// registrations ignored.
func (o *dataDirOptions) config(stopped bool) (datadir.Config, error) {
	var zxid int64
	if o.zxid != "" {
		z := strings.TrimSpace(o.zxid)
		base := 10 // not Go's prefixes: "010" is ten, "1_000" is a typo
		if h, ok := strings.CutPrefix(strings.ToLower(z), "0x"); ok {
			z, base = h, 16
		}
		v, err := strconv.ParseInt(z, base, 64)
		if err != nil || v <= 0 {
			return datadir.Config{}, fmt.Errorf("--zk-zxid: %q is not a positive zxid (decimal or 0x hex)", o.zxid)
		}
		zxid = v
	}
	return datadir.Config{Path: o.path, Chroot: o.chroot, Zxid: zxid, IgnoreRegistrations: stopped}, nil
}
