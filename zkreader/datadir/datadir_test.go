package datadir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The fixtures under testdata/ are the version-2 folders of real servers (3.4.14 to 3.9.3, plain,
// gzip and snappy snapshots) after TestRealServers' seed, kept by running it with
// ZK2KAFKA_DATADIR_FIXTURES=$PWD/testdata. The seed is deterministic, so every variant must read
// the same tree.
var fixtures = []string{"3.4.14", "3.5.10", "3.6.4-gz", "3.8.4-snappy", "3.9.3", "3.9.3-snappy"}

const fixtureChroot = "/legacy"

func readAll(t *testing.T, s *Store) map[string]migrate.LegacyGroup {
	t.Helper()
	ctx := context.Background()
	groups, err := s.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]migrate.LegacyGroup{}
	if err := s.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error { out[g.Group] = g; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func offsetAt(g migrate.LegacyGroup, path string) (migrate.LegacyOffset, bool) {
	for _, o := range g.Offsets {
		if strings.HasSuffix(o.Path, path) {
			return o, true
		}
	}
	return migrate.LegacyOffset{}, false
}

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx, func(t *testing.T) {
			s, err := Open(context.Background(), Config{Path: filepath.Join("testdata", fx), Chroot: fixtureChroot})
			if err != nil {
				t.Fatal(err)
			}
			if w := s.Info().Warnings; len(w) > 0 {
				t.Errorf("warnings on an intact directory: %q", w)
			}
			got := readAll(t, s)
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range got {
					if !yield(k) {
						return
					}
				}
			})
			if want := []string{"g0", "g1", "g2", "g3", "g4", "g5", "g6"}; !slices.Equal(names, want) {
				t.Fatalf("groups %q, want %q (g7 deleted, the decoy outside the chroot never shown)", names, want)
			}
			cases := []struct {
				group, path string
				offset      int64
				invalid     string // a substring of the reason; "" for a valid offset
				note        bool
				absent      bool
			}{
				{group: "g0", path: "/offsets/t0/0", offset: 30000}, // the last of three updates
				{group: "g4", path: "/offsets/t0/3", offset: 30043}, // likewise
				{group: "g4", path: "/offsets/t2/1", offset: 4201},  // created, never updated
				{group: "g6", path: "/offsets/t0/0", offset: 66},    // a committed multi's setData
				{group: "g6", path: "/offsets/t9/0", offset: 5},     // and its creates
				{group: "g6", path: "/offsets/t0/1", offset: 30061}, // a failed multi changes nothing
				{group: "g6", path: "/offsets/t2/3", absent: true},  // the committed multi's delete
				{group: "g1", path: "/offsets/t2/3", absent: true},  // a delete
				{group: "g2", path: "/offsets/t1/0", absent: true},  // a deleted topic
				{group: "g5", path: "/offsets/t0/07", invalid: "leading zero"},
				{group: "g5", path: "/offsets/t0/1", invalid: "sentinel"},
				{group: "g5", path: "/offsets/t0/2", offset: 42, note: true},
				{group: "g5", path: "/offsets/t1/0", invalid: "not a decimal"},
			}
			for _, c := range cases {
				o, ok := offsetAt(got[c.group], c.path)
				switch {
				case c.absent && ok:
					t.Errorf("%s%s: present (%+v), want deleted", c.group, c.path, o)
				case c.absent:
				case !ok:
					t.Errorf("%s%s: missing", c.group, c.path)
				case c.invalid != "" && !strings.Contains(o.Invalid, c.invalid):
					t.Errorf("%s%s: invalid %q, want it to say %q", c.group, c.path, o.Invalid, c.invalid)
				case c.invalid == "" && (o.Invalid != "" || o.Offset != c.offset || (o.Note != "") != c.note):
					t.Errorf("%s%s: %+v, want offset %d (note %v)", c.group, c.path, o, c.offset, c.note)
				}
			}
			// Both consumers' sessions closed before the server stopped: the replay of their
			// closeSession removed their ids/owners.
			for _, g := range []string{"g0", "g3"} {
				if live := got[g].LiveConsumers; len(live) != 0 {
					t.Errorf("%s: live consumers %q after their sessions closed", g, live)
				}
			}
		})
	}
}

// TestZxid reads a fixture as it was at earlier zxids: each must be reached exactly, from the
// newest snapshot at or before it, and a zxid before every snapshot is an error.
func TestZxid(t *testing.T) {
	dir := filepath.Join("testdata", "3.9.3")
	latest, err := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := locate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range []int64{0x20, 0x40, 0xc6, latest.Info().Zxid} {
		s, err := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot, Zxid: z})
		if err != nil {
			t.Errorf("zxid %#x: %v", z, err)
			continue
		}
		if s.Info().Zxid != z || s.Info().SnapshotZxid > z {
			t.Errorf("zxid %#x: reached %#x from snapshot %#x", z, s.Info().Zxid, s.Info().SnapshotZxid)
		}
	}
	// At 0x20 the seed had created only the first groups' first offsets: fewer than at the end.
	early, _ := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot, Zxid: 0x20})
	if n, m := len(readAll(t, early)), len(readAll(t, latest)); n >= m {
		t.Errorf("at zxid 0x20 %d groups, at the end %d: the early read is not early", n, m)
	}
	if _, err := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot, Zxid: latest.Info().Zxid + 5}); err == nil {
		t.Error("a zxid beyond the logs opened")
	}
	_ = fs
}

// copyFixture copies a fixture into a temporary folder the test may damage.
func copyFixture(t *testing.T, fx string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(filepath.Join("testdata", fx))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", fx, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestDamage damages a copy of a fixture as disks, copies and crashes do, and checks what the
// store says: a damaged newer snapshot or a torn last record is read around with a warning
// that names the file and offset, anything else is an error naming them, never a tree.
func TestDamage(t *testing.T) {
	ctx := context.Background()
	intact, err := Open(ctx, Config{Path: filepath.Join("testdata", "3.9.3"), Chroot: fixtureChroot})
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := locate(filepath.Join("testdata", "3.9.3"))
	newestSnap := filepath.Base(fs.snaps[0].path)
	lastLog := filepath.Base(fs.logs[len(fs.logs)-1].path)
	// The log before the last holds the transactions from before the newest snapshot up to
	// the last log: the replay needs it whole.
	neededLog := filepath.Base(fs.logs[len(fs.logs)-2].path)
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		path    func(dir string) string // what to open; the folder by default
		err     string                  // substring of the error; "" when it opens
		warning string                  // substring of a warning when it opens
		sameAs  bool                    // reads the intact tree
	}{
		{name: "newest snapshot truncated", damage: truncate(newestSnap, 0.5),
			warning: newestSnap + ": offset", sameAs: true},
		{name: "newest snapshot with a flipped byte", damage: flip(newestSnap, 0.6),
			warning: newestSnap, sameAs: true},
		{name: "the one snapshot given, truncated", damage: truncate(newestSnap, 0.5),
			path: func(dir string) string { return filepath.Join(dir, newestSnap) }, err: newestSnap + ": offset"},
		{name: "a flipped byte in a log with more after it", damage: flip(lastLog, 0.3),
			err: lastLog + ": offset"},
		{name: "a missing log", damage: remove(neededLog), err: "missing"},
		{name: "the last log torn in its last record", damage: truncateBytes(lastLog, 7),
			warning: lastLog + ": the log ends in a torn record at offset"},
		{name: "every snapshot damaged", damage: func(t *testing.T, dir string) {
			for _, s := range fs.snaps {
				truncate(filepath.Base(s.path), 0.9)(t, dir)
			}
		}, err: "no usable snapshot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFixture(t, "3.9.3")
			c.damage(t, dir)
			path := dir
			if c.path != nil {
				path = c.path(dir)
			}
			s, err := Open(ctx, Config{Path: path, Chroot: fixtureChroot})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(s.Info().Warnings, func(w string) bool { return strings.Contains(w, c.warning) }) {
				t.Errorf("warnings %q, want one saying %q", s.Info().Warnings, c.warning)
			}
			got, want := fingerprintOf(t, s), fingerprintOf(t, intact)
			if c.sameAs && got != want {
				t.Errorf("the tree differs from the intact directory's")
			}
			if !c.sameAs && s.Info().Zxid >= intact.Info().Zxid {
				t.Errorf("reached zxid %#x, want less than the intact %#x", s.Info().Zxid, intact.Info().Zxid)
			}
		})
	}
}

func fingerprintOf(t *testing.T, s *Store) string {
	t.Helper()
	groups := readAll(t, s)
	in := migrate.Inputs{}
	for _, g := range groups {
		in.Legacy = append(in.Legacy, g)
	}
	return migrate.Fingerprint(in)
}

func truncate(name string, frac float64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, int64(float64(st.Size())*frac)); err != nil {
			t.Fatal(err)
		}
	}
}

func truncateBytes(name string, n int64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, st.Size()-n); err != nil {
			t.Fatal(err)
		}
	}
}

func flip(name string, frac float64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[int(float64(len(b))*frac)] ^= 0x5a
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChroot: a chroot that does not exist is an error, as for the live reader; the root
// chroot reads the decoy /consumers of the fixtures' seed.
func TestChroot(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join("testdata", "3.5.10"), Chroot: "/nope"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListGroups(ctx); err == nil || !strings.Contains(err.Error(), "/nope does not exist") {
		t.Errorf("missing chroot: %v", err)
	}
	s, err = Open(ctx, Config{Path: filepath.Join("testdata", "3.5.10")})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := s.ListGroups(ctx); err != nil || !slices.Equal(g, []string{"decoy"}) {
		t.Errorf("root chroot: %q, %v; want the decoy group", g, err)
	}
	var fe *FormatError
	if _, err := Open(ctx, Config{Path: "testdata/nothing"}); err == nil || errors.As(err, &fe) {
		t.Errorf("a missing path: %v", err)
	}
}

// TestZxidInAMissingLog: --zk-zxid inside the transactions of a missing log is an error naming
// the gap, never the older tree the logs before it leave (the read used to stop at the first
// transaction past the zxid, in the next log, before checking for the gap).
func TestZxidInAMissingLog(t *testing.T) {
	fs, _ := locate(filepath.Join("testdata", "3.9.3"))
	neededLog := filepath.Base(fs.logs[len(fs.logs)-2].path)
	inside := fs.logs[len(fs.logs)-1].zxid - 1 // the removed log's last transaction
	dir := copyFixture(t, "3.9.3")
	remove(neededLog)(t, dir)
	s, err := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot, Zxid: inside})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		var reached int64
		if s != nil {
			reached = s.Info().Zxid
		}
		t.Fatalf("--zk-zxid %#x in a removed log: err %v (reached %#x), want the missing transactions named", inside, err, reached)
	}
}

// TestFuzzySingleSnapshot: one snapshot given that holds changes past its name's zxid, as a
// snapshot written while transactions went on does (3.4.14's snapshot.52 holds 0x53). Asked for
// the tree at --zk-zxid 0x52, it is an error, not a warning: it is not that tree.
func TestFuzzySingleSnapshot(t *testing.T) {
	snap := filepath.Join("testdata", "3.4.14", "snapshot.52")
	_, err := Open(context.Background(), Config{Path: snap, Chroot: fixtureChroot, Zxid: 0x52})
	if err == nil || !strings.Contains(err.Error(), "it is not the tree at that zxid") {
		t.Fatalf("--zk-zxid 0x52 on a snapshot holding 0x53: %v, want an error", err)
	}
}
