package zkreader

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
)

// The two read paths, multiRead (ZooKeeper 3.6+) and single requests, on real servers: the
// contract suites on the single path (the ordinary runs take the stack's path, multiRead on
// the zk profile's 3.8), the same answers from both on a tree of every kind of znode, a
// connection broken under multiReads in flight, and the choice of path on each supported
// ZooKeeper version.

func TestLegacyStoreContractSingleReads(t *testing.T) {
	contract.TestLegacyStore(t, func(t *testing.T) (migrate.LegacyStore, contract.Legacy) {
		l := newZKLegacy(t)
		return openPath(t, Config{Servers: l.e.servers()}, false), l
	})
}

func TestLegacyRecheckerContractSingleReads(t *testing.T) {
	contract.TestLegacyRechecker(t, func(t *testing.T) (migrate.LegacyRechecker, contract.Legacy) {
		l := newZKLegacy(t)
		return openPath(t, Config{Servers: l.e.servers()}, false), l
	})
}

// openPath opens a Reader on the path asked for and fails unless it took it.
func openPath(t testing.TB, cfg Config, multi bool) *Reader {
	t.Helper()
	cfg.NoMultiRead = !multi
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open(%v): %v", cfg, err)
	}
	t.Cleanup(r.Close)
	if r.multi.Load() != multi {
		t.Fatalf("Open(%v) took multiRead %v, want %v", cfg, r.multi.Load(), multi)
	}
	return r
}

// TestStackTakesMultiRead: the zk profile's ZooKeeper (3.8, from Kafka 3.9) gets the fast path
// unasked.
func TestStackTakesMultiRead(t *testing.T) {
	e := newEnv(t)
	if stacktest.Get(t).Profile != "zk" || os.Getenv(envSingleReads) != "" {
		t.Skip("the zk profile's ZooKeeper version is known; this run forces single reads or is another profile")
	}
	openPath(t, Config{Servers: e.servers()}, true)
}

// seedPaths writes under root (on c, whose session owns the ephemerals) a tree with every case
// the readers tell apart, and returns its groups. The znodes of user reader:secret are readable
// by that identity and the admin only.
func seedPaths(t testing.TB, c *zk.Conn, root string) []string {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	private := append(zk.DigestACL(zk.PermAll, "reader", "secret"), zk.DigestACL(zk.PermAll, adminUser, adminPass)...)
	put := func(rel, data string, acl []zk.ACL, flags int32) {
		p := root + rel
		if err := ensurePath(c, path.Dir(p)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(p, []byte(data), flags, acl); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	for p := range 150 { // more than one batch
		put(fmt.Sprintf("/consumers/big/offsets/t%d/%d", p%3, p), fmt.Sprint(p*10), open, zk.FlagPersistent)
	}
	put("/consumers/g/offsets/t/0", "5", private, zk.FlagPersistent)
	put("/consumers/g/offsets/t/1", "-1", open, zk.FlagPersistent)
	put("/consumers/g/offsets/t/2", "", open, zk.FlagPersistent)
	put("/consumers/g/offsets/t/3", " 7\n", open, zk.FlagPersistent)
	put("/consumers/g/offsets/t/0-4", "8", open, zk.FlagPersistent)
	put("/consumers/g/offsets/hidden", "", private, zk.FlagPersistent)
	put("/consumers/g/offsets/hidden/0", "9", open, zk.FlagPersistent)
	put("/consumers/g/ids/c1", `{"version":1}`, open, zk.FlagEphemeral)
	put("/consumers/g/owners/t/0", "c1-0", open, zk.FlagEphemeral)
	put("/consumers/g/owners/u/0", "c1-0", private, zk.FlagEphemeral)
	put("/consumers/denied", "", private, zk.FlagPersistent)
	put("/consumers/denied/offsets/t/0", "1", open, zk.FlagPersistent)
	if err := ensurePath(c, root+"/consumers/empty"); err != nil {
		t.Fatal(err)
	}
	return []string{"big", "denied", "empty", "g", "missing"}
}

// compareReads reads groups through both readers and fails unless they agree, for ReadGroups
// and for a RecheckGroups of every offset read.
func compareReads(t *testing.T, fast, single *Reader, groups []string) map[string]migrate.LegacyGroup {
	t.Helper()
	before := fast.multiReads.Load()
	got, want := readAll(t, fast, groups), readAll(t, single, groups)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadGroups differ:\nmultiRead %+v\nsingle    %+v", got, want)
	}
	var reqs []migrate.RecheckRequest
	for _, g := range groups {
		req := migrate.RecheckRequest{Group: g}
		for _, o := range want[g].Offsets {
			if path.Base(path.Dir(o.Path)) == o.Topic { // a znode, not a directory that could not be listed
				req.Offsets = append(req.Offsets, o)
			}
		}
		reqs = append(reqs, req)
	}
	// A znode gone since the plan: absent from the recheck on both paths.
	reqs = append(reqs, migrate.RecheckRequest{Group: "big", Offsets: []migrate.LegacyOffset{{Topic: "t0",
		Path: fast.path("/consumers/big/offsets/t0/999")}}})
	ctx := context.Background()
	gotR, err1 := fast.RecheckGroups(ctx, reqs)
	wantR, err2 := single.RecheckGroups(ctx, reqs)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gotR, wantR) {
		t.Fatalf("RecheckGroups differ:\nmultiRead %+v, %v\nsingle    %+v, %v", gotR, err1, wantR, err2)
	}
	if fast.multiReads.Load() == before || single.multiReads.Load() != 0 {
		t.Fatalf("multiReads sent: %d by the fast reader, %d by the single one; want some and none",
			fast.multiReads.Load()-before, single.multiReads.Load())
	}
	return want
}

// TestReadPathsAgree: on a tree of every kind of znode, with and without the credentials that
// open its private znodes, through a chroot, both paths give the same groups and rechecks.
func TestReadPathsAgree(t *testing.T) {
	e := newEnv(t)
	if os.Getenv(envSingleReads) != "" {
		t.Skip("compares the paths: needs the multiRead one")
	}
	groups := seedPaths(t, e.admin.conns[0], e.root)
	for _, auth := range []string{"", "digest:reader:secret"} {
		t.Run("auth="+auth, func(t *testing.T) {
			cfg := Config{Servers: e.servers(), Auth: auth, Connections: 3}
			got := compareReads(t, openPath(t, cfg, true), openPath(t, cfg, false), groups)
			if n := len(got["big"].Offsets); n != 150 {
				t.Errorf("group big: %d offsets, want 150", n)
			}
			t0 := got["g"].Offsets[0]
			if denied := t0.Invalid != ""; denied != (auth == "") {
				t.Errorf("auth %q: private znode read as %+v", auth, t0)
			}
		})
	}
}

// TestMultiReadSurvivesBrokenConnections: connections cut under multiReads in flight (each
// fifth one sent) cost nothing but time: the batches are read again, on another connection or
// with single requests, and the groups come out as the single path reads them.
func TestMultiReadSurvivesBrokenConnections(t *testing.T) {
	e := newEnv(t)
	if os.Getenv(envSingleReads) != "" {
		t.Skip("breaks multiReads: needs the multiRead path")
	}
	groups := seedPaths(t, e.admin.conns[0], e.root)
	cfg := Config{Servers: e.servers(), Connections: 4}
	fast, single := openPath(t, cfg, true), openPath(t, cfg, false)
	var sent, cut atomic.Int32
	fast.sent = func(c *coalescingConn) {
		if sent.Add(1)%5 == 0 {
			cut.Add(1)
			_ = c.Conn.Close() // under go-zookeeper too: it reconnects and resumes the session
		}
	}
	for range 3 {
		compareReads(t, fast, single, groups)
	}
	if cut.Load() == 0 {
		t.Fatal("no connection was cut: the test tested nothing")
	}
	t.Logf("%d multiReads sent, %d connections cut under them", sent.Load(), cut.Load())
}

// TestZooKeeperVersions: each supported ZooKeeper version (scripts/zkversions) gets the path it
// serves, found by its version: 3.4 and 3.5 single requests, and not one multiRead sent (it
// would cost the connection); 3.6 and later multiRead, with the answers of the single path.
// Through a chroot and with digest credentials, as operators connect.
func TestZooKeeperVersions(t *testing.T) {
	skipUnlessVersionServers(t)
	for _, v := range []struct {
		version string
		multi   bool
	}{{"3.4.14", false}, {"3.5.10", false}, {"3.6.4", true}, {"3.8.4", true}, {"3.9.3", true}} {
		t.Run(v.version, func(t *testing.T) {
			addr := startZooKeeper(t, v.version)
			admin := openPath(t, Config{Servers: addr, Auth: "digest:" + adminUser + ":" + adminPass, Connections: 1}, false)
			groups := seedPaths(t, admin.conns[0], "/legacy")
			cfg := Config{Servers: addr + "/legacy", Auth: "digest:reader:secret", Connections: 2}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			chosen, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(chosen.Close)
			if chosen.multi.Load() != v.multi {
				t.Fatalf("ZooKeeper %s: multiRead %v, want %v", v.version, chosen.multi.Load(), v.multi)
			}
			// The pool left to its defaults is sized by the path found.
			sized, err := Open(ctx, Config{Servers: cfg.Servers, Auth: cfg.Auth})
			if err != nil {
				t.Fatal(err)
			}
			wantConns, wantInFlight := SingleConnections, SingleInFlight
			if v.multi {
				wantConns, wantInFlight = MultiConnections, MultiInFlight
			}
			if len(sized.conns) != wantConns || cap(sized.sideSlots) != wantInFlight/4 || sized.groupsInFlight != wantInFlight/4 {
				t.Errorf("ZooKeeper %s: default pool of %d sessions, %d multiReads and %d groups in flight; want %d, %d, %d",
					v.version, len(sized.conns), cap(sized.sideSlots), sized.groupsInFlight, wantConns, wantInFlight/4, wantInFlight/4)
			}
			sized.Close()
			single := openPath(t, cfg, false)
			if v.multi {
				compareReads(t, chosen, single, groups)
				return
			}
			if got, want := readAll(t, chosen, groups), readAll(t, single, groups); !reflect.DeepEqual(got, want) {
				t.Fatalf("two single-path readers differ:\n%+v\n%+v", got, want)
			}
			if n := chosen.multiReads.Load(); n != 0 {
				t.Fatalf("ZooKeeper %s: %d multiReads sent", v.version, n)
			}
			for i, s := range chosen.sessions {
				if n := s.dials.Load(); n != 1 {
					t.Errorf("ZooKeeper %s: connection %d dialled %d times, want once", v.version, i, n)
				}
			}
			// Had the version been misjudged: the server refuses the first multiRead as
			// unimplemented and closes that connection, which may fail the read under way (as
			// any lost connection does); the Reader keeps to single requests from then on.
			chosen.multi.Store(true)
			err = chosen.ReadGroups(ctx, groups, func(migrate.LegacyGroup) error { return nil })
			t.Logf("ZooKeeper %s: the read that met the refusal: %v", v.version, err)
			if chosen.multi.Load() || chosen.multiReads.Load() == 0 {
				t.Fatalf("ZooKeeper %s: multiRead still on (%v) after %d sent", v.version, chosen.multi.Load(), chosen.multiReads.Load())
			}
			if got, want := readAll(t, chosen, groups), readAll(t, single, groups); !reflect.DeepEqual(got, want) {
				t.Fatalf("after a refused multiRead:\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// startZooKeeper starts a standalone ZooKeeper of version with scripts/zkversions and returns
// its address; it is stopped, by its pid, when the test ends.
func startZooKeeper(t *testing.T, version string) string {
	t.Helper()
	name := stacktest.Name(t, "mr")
	script := filepath.Join(stacktest.RepoRoot(), "scripts", "zkversions")
	out, err := exec.Command(script, "up", name, version).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("scripts/zkversions up %s %s: %v\n%s", name, version, err, stderr)
	}
	envFile := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(script, "down", name).CombinedOutput(); err != nil {
			t.Errorf("scripts/zkversions down %s: %v\n%s", name, err, out)
		} else if !t.Failed() { // a failed run keeps the server's log and data for a look
			if err := os.RemoveAll(filepath.Dir(envFile)); err != nil {
				t.Error(err)
			}
		}
	})
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "ZK="); ok {
			return v
		}
	}
	t.Fatalf("no ZK= in %s", out)
	return ""
}

// skipUnlessVersionServers skips a test that starts ZooKeeper servers of scripts/zkversions
// itself: it runs once, on the zk profile's multiRead pass, and needs java.
func skipUnlessVersionServers(t *testing.T) {
	t.Helper()
	if s := stacktest.Get(t); s.Profile != "zk" || os.Getenv(envSingleReads) != "" {
		t.Skip("runs once, on the zk profile: it starts its own ZooKeeper servers, whatever the stack")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed")
	}
}
