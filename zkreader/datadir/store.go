// Package datadir is a legacy store over a copy of ZooKeeper's data directory: it loads the
// newest valid snapshot, replays the transaction logs after it, and serves the /consumers tree
// as migrate.LegacyStore, so that a plan, a verify or an export can run where no ZooKeeper
// answers (a CI job with a backup, a cluster whose ensemble was decommissioned).
package datadir

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// ListGroups returns the children of <chroot>/consumers, sorted. A missing /consumers means no
// groups; a missing chroot is an error, as for the live reader.
func (s *Store) ListGroups(ctx context.Context) ([]string, error) {
	if !s.t.chrootExists {
		return nil, fmt.Errorf("zookeeper data directory %s at zxid %#x: the chroot %s does not exist", s.info.Dir, s.info.Zxid, s.t.chroot)
	}
	if s.t.consumers == nil {
		return nil, nil
	}
	kids := s.t.consumers.children()
	groups := make([]string, len(kids))
	for i, g := range kids {
		groups[i] = g.name
	}
	return groups, nil
}

// ReadGroups emits each requested group once, in request order, from the loaded tree.
func (s *Store) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	seen := make(map[string]bool, len(groups))
	for _, g := range groups {
		if err := zkreader.ValidateName(g); err != nil {
			return fmt.Errorf("read group %q: not a valid group name: %w", g, err)
		}
	}
	for _, g := range groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(s.group(g)); err != nil {
			return fmt.Errorf("read group %q: emit: %w", g, err)
		}
	}
	return nil
}

// RecheckGroups answers the re-read of copy with the same tree: a data directory does not
// change, so the re-check finds what the plan read (the point is that copy's code path is the
// same for both stores).
func (s *Store) RecheckGroups(ctx context.Context, reqs []migrate.RecheckRequest) ([]migrate.LegacyGroup, error) {
	out := make([]migrate.LegacyGroup, len(reqs))
	for i, req := range reqs {
		if err := zkreader.ValidateName(req.Group); err != nil {
			if len(req.Offsets) > 0 {
				return nil, fmt.Errorf("recheck group %q: not a valid group name: %w", req.Group, err)
			}
			out[i] = migrate.LegacyGroup{Group: req.Group} // nothing can be registered under it
			continue
		}
		base := s.t.root + "/" + req.Group
		prefix := base + "/offsets/"
		gn := s.t.lookup(base)
		lg := migrate.LegacyGroup{Group: req.Group, LiveConsumers: s.liveness(gn)}
		for _, o := range req.Offsets {
			topic, child, ok := strings.Cut(strings.TrimPrefix(o.Path, prefix), "/")
			if !strings.HasPrefix(o.Path, prefix) || !ok || topic != o.Topic || strings.Contains(child, "/") {
				return nil, fmt.Errorf("recheck group %q: znode %s is not an offset of topic %q of this group under %s",
					req.Group, o.Path, o.Topic, s.t.root)
			}
			if tn := s.t.lookup(base + "/offsets/" + topic); tn != nil {
				if n := tn.child([]byte(child)); n != nil {
					lg.Offsets = append(lg.Offsets, offsetOf(topic, o.Path, child, n.leaf))
				} else if p, err := zkreader.ParsePartition(child); err == nil && tn.parts != nil {
					if i, found := tn.parts.find(p); found {
						off, mtime := tn.parts.get(i)
						lg.Offsets = append(lg.Offsets, migrate.LegacyOffset{Topic: topic, Partition: p, Offset: off,
							Path: o.Path, Mtime: time.UnixMilli(mtime).UTC()})
					}
				}
			}
		}
		sortOffsets(lg.Offsets)
		out[i] = lg
	}
	return out, ctx.Err()
}

// group is one group as the live reader reports it: its offsets in (topic, partition, path)
// order, and its liveness registrations sorted. The znode paths are cut from one string per
// group.
func (s *Store) group(name string) migrate.LegacyGroup {
	base := s.t.root + "/" + name
	gn := s.t.lookup(base)
	lg := migrate.LegacyGroup{Group: name, LiveConsumers: s.liveness(gn)}
	if gn == nil {
		return lg
	}
	offs := gn.child([]byte("offsets"))
	if offs == nil {
		return lg
	}
	topics := offs.children()
	n, size := 0, 0
	for _, tn := range topics {
		dir := len(base) + len("/offsets/") + len(tn.name) + 1
		for _, c := range tn.children() {
			n++
			size += dir + len(c.name)
		}
		if ps := tn.parts; ps != nil {
			for i := range ps.len() {
				n++
				size += dir + decimalLen(ps.part(i))
			}
		}
	}
	if n == 0 {
		return lg
	}
	var b strings.Builder
	b.Grow(size)
	type span struct{ from, to int }
	spans := make([]span, 0, n)
	lg.Offsets = make([]migrate.LegacyOffset, 0, n)
	var num [12]byte
	for _, tn := range topics {
		dir := func() int {
			from := b.Len()
			b.WriteString(base)
			b.WriteString("/offsets/")
			b.WriteString(tn.name)
			b.WriteByte('/')
			return from
		}
		if ps := tn.parts; ps != nil {
			for i := range ps.len() {
				p := ps.part(i)
				from := dir()
				b.Write(strconv.AppendInt(num[:0], int64(p), 10))
				spans = append(spans, span{from, b.Len()})
				off, mtime := ps.get(i)
				lg.Offsets = append(lg.Offsets, migrate.LegacyOffset{Topic: tn.name, Partition: p, Offset: off,
					Mtime: time.UnixMilli(mtime).UTC()})
			}
		}
		for _, c := range tn.children() {
			from := dir()
			b.WriteString(c.name)
			spans = append(spans, span{from, b.Len()})
			lg.Offsets = append(lg.Offsets, offsetOf(tn.name, "", c.name, c.leaf))
		}
	}
	paths := b.String()
	for i, sp := range spans {
		lg.Offsets[i].Path = paths[sp.from:sp.to]
	}
	sortOffsets(lg.Offsets)
	return lg
}

// decimalLen is the length of a partition number in decimal.
func decimalLen(p int32) int {
	n := 1
	for v := p; v >= 10; v /= 10 {
		n++
	}
	if p < 0 {
		n++ // a compact partition is never negative; for completeness
	}
	return n
}

// offsetOf reads one offset znode kept with its data, with the live reader's parsing: the
// same partition name and data rules, so that a plan from a data directory matches the live
// plan entry for entry.
func offsetOf(topic, path, child string, d *leafData) migrate.LegacyOffset {
	o := migrate.LegacyOffset{Topic: topic, Partition: -1, Path: path, Mtime: time.UnixMilli(d.mtime).UTC()}
	p, err := zkreader.ParsePartition(child)
	if err != nil {
		o.Invalid = err.Error() // whatever the znode holds
		return o
	}
	o.Partition = p
	if v, note, err := zkreader.ParseOffsetNote([]byte(d.data)); err != nil {
		o.Invalid = err.Error()
	} else {
		o.Offset, o.Note = v, note
	}
	return o
}

func sortOffsets(offs []migrate.LegacyOffset) {
	slices.SortFunc(offs, func(a, b migrate.LegacyOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if a.Partition != b.Partition {
			return compareZxid(int64(a.Partition), int64(b.Partition))
		}
		return strings.Compare(a.Path, b.Path)
	})
}

func (s *Store) liveness(gn *node) []string {
	if s.ignoreLive {
		return nil
	}
	return liveness(gn)
}

// liveness lists a group's registrations as the live reader does: "ids/<id>" for each
// consumer id, "owners/<topic>/<partition>=<owner>" for each claimed partition. In a data
// directory these ephemerals are the ones registered at the zxid read: the sessions that
// owned them are gone with the server, so they say who was running then, not now.
func liveness(gn *node) []string {
	if gn == nil {
		return nil
	}
	var live []string
	if ids := gn.child([]byte("ids")); ids != nil {
		for _, id := range ids.children() {
			live = append(live, "ids/"+id.name)
		}
	}
	if owners := gn.child([]byte("owners")); owners != nil {
		for _, tn := range owners.children() {
			for _, pn := range tn.children() {
				live = append(live, "owners/"+tn.name+"/"+pn.name+"="+strings.TrimSpace(pn.leaf.data))
			}
		}
	}
	slices.Sort(live)
	return live
}
