// Package datadir is a legacy store over a copy of ZooKeeper's data directory: it loads the
// newest valid snapshot, replays the transaction logs after it, and serves the /consumers tree
// as migrate.LegacyStore, so that a plan, a verify or an export can run where no ZooKeeper
// answers (a CI job with a backup, a cluster whose ensemble was decommissioned).
package datadir

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// Config says what to read.
type Config struct {
	// Path is ZooKeeper's dataDir, its version-2 folder, or one snapshot file.
	Path string
	// Chroot is the chroot the legacy consumers used ("" or "/kafka"): /consumers is read
	// under it, as with the chroot of a --zk connect string.
	Chroot string
	// Zxid, when not zero, stops the replay after the last transaction at or below it: the
	// tree as it was at that zxid. Zero means up to the last complete transaction.
	Zxid int64
	// IgnoreRegistrations reports no group as having live consumers: the operator says the
	// legacy consumers are stopped, whatever ids/owners registrations the copy holds (the
	// ensemble is gone, so nobody could expire their sessions).
	IgnoreRegistrations bool
}

// Info is what Open read: which snapshot, up to which transaction, and how old that is.
type Info struct {
	Dir          string
	Snapshot     string
	SnapshotZxid int64
	Logs         []string // the logs replayed, in order
	// Zxid is the zxid the tree is at: the last transaction replayed, or the snapshot's.
	Zxid int64
	// LastTxn is the time of the last transaction replayed or, when none was, of the newest
	// change to a /consumers znode in the snapshot: the offsets are this old.
	LastTxn time.Time
	// Warnings are what was read around: an invalid newer snapshot, a torn log tail.
	Warnings []string
	// Registrations counts the ids/ and owners/ registrations under /consumers: the
	// consumers that were registered at Zxid.
	Registrations int
}

// Store is the /consumers tree of a data directory at one zxid. It never changes once open.
type Store struct {
	t          *tree
	info       Info
	ignoreLive bool
}

var (
	_ migrate.LegacyStore     = (*Store)(nil)
	_ migrate.LegacyRechecker = (*Store)(nil)
)

// Open reads the data directory. It fails, naming the file and byte offset, on any file it
// needs that is damaged: a corrupt transaction in the middle of the logs, a gap between logs,
// no valid snapshot. A newer snapshot that does not check out is skipped with a warning (as
// ZooKeeper itself does: a copy taken while the server wrote it), and so is a torn last
// record of the logs (the server died, or the copy was taken, while it was written).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Chroot == "/" {
		cfg.Chroot = ""
	}
	if cfg.Chroot != "" {
		if err := zkreader.ValidatePath(cfg.Chroot); err != nil {
			return nil, fmt.Errorf("--zk-chroot: %w", err)
		}
	}
	if cfg.Zxid < 0 {
		return nil, fmt.Errorf("--zk-zxid: %d is negative", cfg.Zxid)
	}
	fs, err := locate(cfg.Path)
	if err != nil {
		return nil, err
	}
	var warnings, tried []string
	for _, snap := range fs.snaps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cfg.Zxid != 0 && snap.zxid > cfg.Zxid {
			continue
		}
		s, err := load(fs, snap, cfg)
		var skip *skipError
		switch {
		case errors.As(err, &skip) && !fs.single:
			warnings = append(warnings, skip.Error())
			tried = append(tried, skip.Error())
			continue
		case errors.As(err, &skip):
			return nil, skip.err
		case err != nil:
			return nil, err
		}
		s.info.Warnings = append(warnings, s.info.Warnings...)
		return s, nil
	}
	if cfg.Zxid != 0 && len(tried) == 0 {
		return nil, fmt.Errorf("--zk-zxid %#x: %s has no snapshot at or before that zxid (the oldest is %s)",
			cfg.Zxid, fs.dir, fs.snaps[len(fs.snaps)-1].path)
	}
	return nil, fmt.Errorf("%s: no usable snapshot:\n  %s", fs.dir, strings.Join(tried, "\n  "))
}

// skipError is a snapshot that cannot be the base of the replay, when an older one might.
type skipError struct {
	snap string
	err  error
}

func (e *skipError) Error() string { return fmt.Sprintf("skipped snapshot %s: %v", e.snap, e.err) }

// load builds the store from one snapshot and the logs after it.
func load(fs files, snap dataFile, cfg Config) (*Store, error) {
	t := newTree(cfg.Chroot)
	si, err := loadSnapshot(snap.path, t)
	if err != nil {
		return nil, &skipError{snap.path, err}
	}
	info := Info{Dir: fs.dir, Snapshot: snap.path, SnapshotZxid: snap.zxid, Zxid: snap.zxid}
	if si.newestMtime > 0 {
		info.LastTxn = time.UnixMilli(si.newestMtime).UTC()
	}
	if err := replay(fs, snap, cfg, t, &info); err != nil {
		return nil, err
	}
	// A snapshot is fuzzy: written while transactions went on, it can hold changes of
	// transactions after its name's zxid. Replaying the logs past all of them makes the tree
	// whole again; a kept znode changed after the zxid reached means the logs (or --zk-zxid)
	// stop before the snapshot does, and the tree is no state /consumers was ever in.
	if t.maxZxid > info.Zxid && !fs.single {
		why := "the transaction logs end before it"
		if cfg.Zxid != 0 {
			why = fmt.Sprintf("--zk-zxid %#x is before it", cfg.Zxid)
		}
		return nil, &skipError{snap.path, fmt.Errorf("it holds changes under %s up to zxid %#x, and %s (reached %#x)",
			t.root, t.maxZxid, why, info.Zxid)}
	}
	if t.maxZxid > info.Zxid && cfg.Zxid != 0 {
		return nil, fmt.Errorf("%s holds changes under %s up to zxid %#x, after --zk-zxid %#x, and no log replays to them: it is not the tree at that zxid",
			snap.path, t.root, t.maxZxid, cfg.Zxid)
	}
	if t.maxZxid > info.Zxid {
		info.Warnings = append(info.Warnings, fmt.Sprintf("%s holds changes up to zxid %#x and no log replays past them: the tree is the snapshot as written, fuzzy between %#x and %#x",
			snap.path, t.maxZxid, snap.zxid, t.maxZxid))
		info.Zxid = t.maxZxid
	}
	st := &Store{t: t, info: info, ignoreLive: cfg.IgnoreRegistrations}
	t.trim()
	if t.consumers != nil {
		for _, g := range t.consumers.children() {
			st.info.Registrations += len(liveness(g))
		}
	}
	return st, nil
}

// replay applies the transactions after the snapshot, in zxid order, up to cfg.Zxid or the
// last complete one. Within an epoch (the high 32 bits) zxids follow each other without a
// gap: a missing one means a missing or damaged log, which is an error.
func replay(fs files, snap dataFile, cfg Config, t *tree, info *Info) error {
	logs := fs.logsFrom(snap.zxid)
	var torn *logEnd
	var tornFile string
	for _, l := range logs {
		if torn != nil {
			// The server restarted after a torn write and began a new log: acceptable only if
			// the new log takes up right after the last good transaction.
			if sameEpoch(l.zxid, info.Zxid) && l.zxid != info.Zxid+1 {
				return fmt.Errorf("%s: offset %d: damaged record (%s), and the next log %s starts at zxid %#x, not %#x: transactions are missing",
					tornFile, torn.offset, torn.reason, l.path, l.zxid, info.Zxid+1)
			}
			info.Warnings = append(info.Warnings, fmt.Sprintf("%s: torn last record at offset %d (%s): the server restarted after it", tornFile, torn.offset, torn.reason))
			torn = nil
		}
		used := false
		end, stopped, err := readLog(l.path, func(h txnHeader, body []byte, off int64) (bool, error) {
			if h.zxid <= info.Zxid {
				return false, nil // before the snapshot, or already in an older log
			}
			if cfg.Zxid != 0 && info.Zxid >= cfg.Zxid {
				return true, nil // everything up to --zk-zxid is applied
			}
			// The gap check comes before the stop at a later zxid: transactions missing up to
			// --zk-zxid would otherwise leave an older tree behind, without an error.
			if sameEpoch(h.zxid, info.Zxid) && h.zxid != info.Zxid+1 {
				return false, &FormatError{File: l.path, Offset: off, Reason: fmt.Sprintf("transaction zxid %#x follows %#x: transactions %#x to %#x are missing (a log file is missing or damaged)",
					h.zxid, info.Zxid, info.Zxid+1, h.zxid-1)}
			}
			if cfg.Zxid != 0 && h.zxid > cfg.Zxid {
				return true, nil
			}
			if err := applyTxn(t, h, body, l.path, off); err != nil {
				return false, err
			}
			info.Zxid, info.LastTxn, used = h.zxid, time.UnixMilli(h.time).UTC(), true
			return false, nil
		})
		if err != nil {
			return err
		}
		if used {
			info.Logs = append(info.Logs, l.path)
		}
		if stopped {
			break // the check of --zk-zxid below applies
		}
		if end.torn {
			torn, tornFile = &end, l.path
		}
	}
	if torn != nil {
		info.Warnings = append(info.Warnings, fmt.Sprintf("%s: the log ends in a torn record at offset %d (%s): read up to zxid %#x, the last complete transaction",
			tornFile, torn.offset, torn.reason, info.Zxid))
	}
	if cfg.Zxid != 0 && info.Zxid != cfg.Zxid {
		return fmt.Errorf("--zk-zxid %#x: %s holds no transaction with that zxid (reached %#x)", cfg.Zxid, fs.dir, info.Zxid)
	}
	return nil
}

func sameEpoch(a, b int64) bool { return a>>32 == b>>32 }

// Info says what Open read.
func (s *Store) Info() Info { return s.info }

// Close releases nothing: the tree is in memory. It is there for symmetry with the live reader.
func (s *Store) Close() {}
