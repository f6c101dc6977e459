// Package legacy is the legacy source of a run, opened once: the store the ZooKeeper-era
// offsets are read from (a running ensemble in the consumers or the Storm layout, or a copy of
// ZooKeeper's data directory) together with what that source can do. The commands ask the
// Source, never which kind of source they hold: a new transport or layout is one constructor
// here.
//
// Reads: whatever its adapter reads (package zkreader, zkreader/datadir). Writes: nothing of
// its own; its Writer and Watcher write through zkreader.
package legacy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

// Source is an opened legacy source and its capabilities. The zero value of a capability
// means the source lacks it; the reason is in the matching string, for the error of a verb
// that needs it.
type Source struct {
	// Store reads the offsets and the liveness registrations (always set). A source whose
	// liveness cannot be seen (a data directory) has a migrate.SnapshotStore here: a write into
	// Kafka from it needs the operator's word that the legacy consumers are stopped.
	Store migrate.LegacyStore
	// Writer writes ZooKeeper (restore --to zk, dual-commit --reverse, verify --mark); nil
	// when the source is read-only, and then ReadOnly says why.
	Writer   migrate.LegacyWriter
	ReadOnly string
	// Watch opens a watcher on the source's changes, with its own session (dual-commit); nil
	// when this source offers none: dual-commit then relies on its resync and poll alone.
	Watch func(ctx context.Context) (Watcher, error)
	// Unchanging, when set, says why the source never changes (a data directory): dual-commit,
	// which follows changes, is refused with it.
	Unchanging string
	// Identity names the ZooKeeper the offsets come from, as far as it is known (a plan file
	// records it; a saved plan is checked against it). KafkaClusterID is not set here.
	Identity migrate.ClusterIdentity
	// Where names where the groups are looked for, for a selection that matches none.
	Where string
	// Notes are said on stderr once the source is open (what a data directory read gave),
	// Warnings logged as warnings; BeforeWrite, when set, is said before a copy writes
	// anything (how old the offsets are).
	Notes       []string
	Warnings    []string
	BeforeWrite func() string

	close func()
}

// Watcher follows the source's changes on its own ZooKeeper session, which also carries
// dual-commit's single-writer lease.
type Watcher interface {
	migrate.LegacyWatcher
	// Expiries counts the session expiries so far.
	Expiries() int64
	// OpenLease takes a place in line for the lease on this watcher's session.
	OpenLease(ctx context.Context, owner zkreader.LeaseOwner) (migrate.LegacyLease, error)
	Close()
}

// Close releases what Open opened. Ephemeral znodes of its sessions vanish with them.
func (s *Source) Close() {
	if s.close != nil {
		s.close()
	}
}

// NewStatic is a Source over a store the caller opened itself (tests, library callers): it
// can write when store is also a migrate.LegacyWriter, has no watcher, and sees liveness as
// the store reports it.
func NewStatic(store migrate.LegacyStore, writer migrate.LegacyWriter) *Source {
	s := &Source{Store: store, Writer: writer, Where: "under /consumers"}
	if writer == nil {
		s.ReadOnly = fmt.Sprintf("the legacy store %T cannot write to ZooKeeper", store)
	}
	return s
}

// LegacyWriter returns the write side, or an error saying why this source has none.
func (s *Source) LegacyWriter() (migrate.LegacyWriter, error) {
	if s.Writer == nil {
		return nil, errors.New(s.ReadOnly)
	}
	return s.Writer, nil
}

// CheckWriteIntoKafka is the condition of a write into Kafka from this source (restore --to
// kafka; copier.Copy applies it itself): where the legacy consumers cannot be seen, the
// operator must say they are stopped (migrate.CheckWriteFrom).
func (s *Source) CheckWriteIntoKafka(legacyStopped bool) error {
	return migrate.CheckWriteFrom(s.Store, legacyStopped)
}

// Config says which source to open.
type Config struct {
	// ZooKeeper reaches a running ensemble (Servers, TLS, auth ...). Ignored with DataDir.
	ZooKeeper zkreader.Config
	// DataDir, when set, reads a copy of ZooKeeper's data directory instead of an ensemble.
	DataDir *datadir.Config
	// Storm, when set, reads one storm-kafka spout's layout instead of /consumers.
	Storm *zkreader.StormLayout
}

// Open opens the source cfg names.
func Open(ctx context.Context, cfg Config) (*Source, error) {
	switch {
	case cfg.DataDir != nil && cfg.Storm != nil:
		return nil, errors.New("--layout storm reads a live ZooKeeper: a data directory (--zk-data-dir) keeps /consumers only")
	case cfg.DataDir != nil:
		return openDataDir(ctx, *cfg.DataDir)
	case cfg.Storm != nil:
		return openStorm(ctx, cfg.ZooKeeper, *cfg.Storm)
	}
	return openEnsemble(ctx, cfg.ZooKeeper)
}

// openEnsemble is the consumers layout on a running ensemble: it reads, writes and watches.
func openEnsemble(ctx context.Context, zc zkreader.Config) (*Source, error) {
	r, err := zkreader.Open(ctx, zc)
	if err != nil {
		return nil, err
	}
	id, where := EnsembleIdentity(zc.Servers)
	return &Source{
		Store: r, Writer: r, Identity: id, Where: where,
		Watch: func(ctx context.Context) (Watcher, error) {
			w, err := zkreader.OpenWatcher(ctx, zc)
			if err != nil {
				return nil, err
			}
			return zkWatcher{w}, nil
		},
		close: r.Close,
	}, nil
}

// openStorm is one storm-kafka spout's JSON znodes: read and watched, never written. A
// topology registers nothing while it runs: the layout's Stopped is the operator's word.
func openStorm(ctx context.Context, zc zkreader.Config, l zkreader.StormLayout) (*Source, error) {
	s, err := zkreader.OpenStorm(ctx, zc, l)
	if err != nil {
		return nil, err
	}
	id, _ := EnsembleIdentity(zc.Servers)
	return &Source{
		Store: s, ReadOnly: s.ReadOnly(), Identity: id,
		Where: "in the storm spout " + path.Join("/", id.Chroot, l.Root, l.SpoutID),
		Watch: func(ctx context.Context) (Watcher, error) {
			w, err := zkreader.OpenStormWatcher(ctx, zc, l)
			if err != nil {
				return nil, err
			}
			return zkWatcher{w}, nil
		},
		close: s.Close,
	}, nil
}

// EnsembleIdentity is the servers and chroot of a connect string, and where the consumers
// layout looks for groups under that chroot.
func EnsembleIdentity(servers string) (id migrate.ClusterIdentity, where string) {
	hosts, chroot, err := zkreader.ParseServers(servers)
	if err != nil {
		return migrate.ClusterIdentity{}, "under /consumers"
	}
	id = migrate.ClusterIdentity{ZooKeeper: slices.Compact(slices.Sorted(slices.Values(hosts))), Chroot: chroot}
	return id, "under " + path.Join("/", chroot, "consumers")
}

// zkWatcher is a zkreader.Watcher that opens the lease on its own session.
type zkWatcher struct{ *zkreader.Watcher }

func (w zkWatcher) OpenLease(ctx context.Context, owner zkreader.LeaseOwner) (migrate.LegacyLease, error) {
	return zkreader.OpenLease(ctx, w.Watcher, owner)
}
