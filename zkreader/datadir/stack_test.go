package datadir_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// server is one ZooKeeper started by scripts/zkversions.
type server struct {
	name, version, zk, dataDir, libs string
}

// variants are the formats the store must read: every supported version, and the gzip and
// snappy snapshots of 3.6+.
var variants = []struct{ version, compression string }{
	{"3.4.14", ""},
	{"3.5.10", ""},
	{"3.6.4", "gz"},
	{"3.8.4", "snappy"},
	{"3.9.3", ""},
	{"3.9.3", "snappy"},
}

// TestRealServers checks the store against real ZooKeeper servers of each version: /consumers
// seeded through the normal client, the data directory copied while the server runs and
// after it stopped, and the plan inputs read offline fingerprinted against the live read at
// the same zxid. ZooKeeper's own SnapshotFormatter and TxnLogToolkit read the same files as a
// second opinion. It runs once, on the zk profile of the stack runs (scripts/test).
func TestRealServers(t *testing.T) {
	if s := stacktest.Get(t); s.Profile != "zk" {
		t.Skip("runs on the zk profile only: it starts its own ZooKeeper servers, whatever the stack")
	}
	if _, err := exec.LookPath("java"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("java is not installed")
		}
		t.Skip("java is not installed")
	}
	for _, v := range variants {
		name := v.version
		if v.compression != "" {
			name += "-" + v.compression
		}
		t.Run(name, func(t *testing.T) { testServer(t, v.version, v.compression) })
	}
}

func testServer(t *testing.T, version, compression string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := startServer(t, version, compression)
	const chroot = "/legacy"
	t.Logf("ZooKeeper %s at %s, data %s", version, srv.zk, srv.dataDir)
	conn := connect(t, srv.zk)
	owner := seed(t, conn, chroot)
	defer owner.Close()

	// The live read, and the zxid the server was at just before it: reading opens sessions,
	// which are transactions too, but none of them touches /consumers.
	zxid := serverZxid(t, srv.zk)
	live := fingerprint(t, ctx, openLive(t, ctx, srv.zk+chroot))

	// A copy taken while the server runs and writes elsewhere: the copy can catch a snapshot
	// half written or a log in the middle of a record.
	stop := churn(t, srv.zk)
	liveCopy := copyDir(t, srv.dataDir)
	stop()
	checkOffline(t, ctx, liveCopy, chroot, zxid, live, "copy of a running server")

	owner.Close()
	conn.Close()
	stopServer(t, srv)
	cold := copyDir(t, srv.dataDir)
	snaps, logs := countFiles(t, cold)
	if snaps < 2 || logs < 2 {
		t.Errorf("the run left %d snapshots and %d logs: want several of each (snapCount too large?)", snaps, logs)
	}
	// With the owner's session closed, its ephemerals are gone: the plan differs from the live
	// one only there, which the closeSession replay must show.
	s := checkOffline(t, ctx, cold, chroot, zxid, live, "copy of a stopped server (at the live zxid)")
	latest := open(t, ctx, datadir.Config{Path: cold, Chroot: chroot})
	if g := readGroup(t, ctx, latest, "g0"); len(g.LiveConsumers) != 0 {
		t.Errorf("after the owner's session closed, g0 still has live consumers %q", g.LiveConsumers)
	}
	secondOpinion(t, ctx, srv, cold, chroot, s)
	if dir := os.Getenv("ZK2KAFKA_DATADIR_FIXTURES"); dir != "" {
		writeFixture(t, cold, filepath.Join(dir, filepath.Base(t.Name())))
	}
}

// writeFixture keeps a copy of a stopped server's version-2 folder for the unit tests
// (testdata/<variant>), without the zeros that pad each log to its preallocated size: the
// end of the file ends the records just as the zeros do.
func writeFixture(t *testing.T, dataDir, dst string) {
	t.Helper()
	must(t, "fixture", os.RemoveAll(dst))
	must(t, "fixture", os.MkdirAll(dst, 0o755))
	src := filepath.Join(dataDir, "version-2")
	ents, err := os.ReadDir(src)
	must(t, "fixture", err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		must(t, "fixture", err)
		if strings.HasPrefix(e.Name(), "log.") {
			b = []byte(strings.TrimRight(string(b), "\x00"))
			// A record ends in 'B' (0x42), never a zero: trimming stops there.
		}
		must(t, "fixture", os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

func startServer(t *testing.T, version, compression string) server {
	t.Helper()
	name := stacktest.Name(t, "dd")
	args := []string{"up", name, version}
	if compression != "" {
		args = append(args, compression)
	}
	out, err := exec.Command(filepath.Join(stacktest.RepoRoot(), "scripts", "zkversions"), args...).Output()
	if err != nil {
		t.Fatalf("scripts/zkversions %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
	}
	env := readEnvFile(t, strings.TrimSpace(string(out)))
	srv := server{name: name, version: version, zk: env["ZK"], dataDir: env["DATA_DIR"], libs: env["LIBS"]}
	t.Cleanup(func() {
		stopServer(t, srv)
		if !t.Failed() { // a failed run keeps the server's log and data for a look
			os.RemoveAll(filepath.Dir(srv.dataDir))
		}
	})
	return srv
}

func stopServer(t *testing.T, srv server) {
	if out, err := exec.Command(filepath.Join(stacktest.RepoRoot(), "scripts", "zkversions"), "down", srv.name).CombinedOutput(); err != nil {
		t.Errorf("scripts/zkversions down %s: %v\n%s", srv.name, err, out)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c := dial(t, addr)
	t.Cleanup(c.Close)
	return c
}

// dial connects and waits for the session: a server that answers ruok can still close new
// connections for a moment while it loads its database, and the client then gives up on the
// requests sent meanwhile.
func dial(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	must(t, "connect "+addr, err)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if e.State == zk.StateHasSession {
				return c
			}
		case <-timeout:
			c.Close()
			t.Fatalf("no ZooKeeper session with %s within 30s", addr)
		}
	}
}

var acl = zk.WorldACL(zk.PermAll)

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func create(t *testing.T, c *zk.Conn, path, data string, flags int32) {
	t.Helper()
	_, err := c.Create(path, []byte(data), flags, acl)
	must(t, "create "+path, err)
}

// seed writes a /consumers tree with everything the replay must follow: creates, updates,
// deletes of znodes and of a whole group, multis (one that commits, one that fails), invalid
// data, and ephemeral ids/owners registrations of a session that closes (its znodes go) and of
// one that stays open (returned; its znodes stay until it closes). It also writes outside
// /consumers, and a decoy /consumers outside the chroot, which must not show.
func seed(t *testing.T, c *zk.Conn, chroot string) *zk.Conn {
	t.Helper()
	create(t, c, chroot, "", 0)
	create(t, c, chroot+"/consumers", "", 0)
	create(t, c, "/consumers", "", 0)
	create(t, c, "/consumers/decoy", "", 0)
	create(t, c, "/other", "x", 0)
	base := chroot + "/consumers"
	for g := range 8 {
		gp := fmt.Sprintf("%s/g%d", base, g)
		create(t, c, gp, "", 0)
		create(t, c, gp+"/offsets", "", 0)
		for tp := range 3 {
			dir := fmt.Sprintf("%s/offsets/t%d", gp, tp)
			create(t, c, dir, "", 0)
			for p := range 4 {
				create(t, c, fmt.Sprintf("%s/%d", dir, p), strconv.Itoa(g*1000+tp*100+p), 0)
			}
		}
	}
	// Updates, several per znode, so that snapshots land between them.
	for round := range 3 {
		for g := range 8 {
			for p := range 4 {
				path := fmt.Sprintf("%s/g%d/offsets/t0/%d", base, g, p)
				_, err := c.Set(path, []byte(strconv.Itoa(10000*(round+1)+g*10+p)), -1)
				must(t, "set "+path, err)
			}
		}
	}
	// Deletes: one partition, one topic, one whole group.
	must(t, "delete", c.Delete(base+"/g1/offsets/t2/3", -1))
	for p := range 4 {
		must(t, "delete", c.Delete(fmt.Sprintf("%s/g2/offsets/t1/%d", base, p), -1))
	}
	must(t, "delete", c.Delete(base+"/g2/offsets/t1", -1))
	for tp := range 3 {
		for p := range 4 {
			must(t, "delete", c.Delete(fmt.Sprintf("%s/g7/offsets/t%d/%d", base, tp, p), -1))
		}
		must(t, "delete", c.Delete(fmt.Sprintf("%s/g7/offsets/t%d", base, tp), -1))
	}
	must(t, "delete", c.Delete(base+"/g7/offsets", -1))
	must(t, "delete", c.Delete(base+"/g7", -1))
	// A multi that commits, and one that fails on its version check (an error txn).
	_, err := c.Multi(
		&zk.CreateRequest{Path: base + "/g6/offsets/t9", Data: nil, Acl: acl},
		&zk.CreateRequest{Path: base + "/g6/offsets/t9/0", Data: []byte("5"), Acl: acl},
		&zk.SetDataRequest{Path: base + "/g6/offsets/t0/0", Data: []byte("66"), Version: -1},
		&zk.DeleteRequest{Path: base + "/g6/offsets/t2/3", Version: -1},
	)
	must(t, "multi", err)
	if _, err := c.Multi(
		&zk.SetDataRequest{Path: base + "/g6/offsets/t0/1", Data: []byte("999"), Version: -1},
		&zk.CheckVersionRequest{Path: base + "/g6/offsets/t0/2", Version: 12345},
	); err == nil {
		t.Fatal("the failing multi committed")
	}
	// Invalid znodes, read as the live reader reads them.
	create(t, c, base+"/g5/offsets/t0/07", "1", 0)
	_, err = c.Set(base+"/g5/offsets/t0/1", []byte("-1"), -1)
	must(t, "set", err)
	_, err = c.Set(base+"/g5/offsets/t0/2", []byte(" 42\n"), -1)
	must(t, "set", err)
	_, err = c.Set(base+"/g5/offsets/t1/0", []byte("abc"), -1)
	must(t, "set", err)

	// Liveness: a consumer whose session closes, and one that stays.
	gone := dial(t, c.Server())
	owner := dial(t, c.Server())
	for _, g := range []string{"g0", "g3"} {
		create(t, c, base+"/"+g+"/ids", "", 0)
		create(t, c, base+"/"+g+"/owners", "", 0)
		create(t, c, base+"/"+g+"/owners/t0", "", 0)
	}
	create(t, owner, base+"/g0/ids/c-owner", `{"version":1}`, zk.FlagEphemeral)
	create(t, owner, base+"/g0/owners/t0/0", "c-owner-0\n", zk.FlagEphemeral)
	create(t, gone, base+"/g3/ids/c-gone", `{"version":1}`, zk.FlagEphemeral)
	create(t, gone, base+"/g3/owners/t0/1", "c-gone-0", zk.FlagEphemeral)
	gone.Close()
	// Enough writes elsewhere for several snapshots and logs (snapCount=100).
	for i := range 250 {
		_, err := c.Set("/other", []byte(strconv.Itoa(i)), -1)
		must(t, "set /other", err)
	}
	// The closed session's znodes are gone once the server says so.
	waitGone(t, c, base+"/g3/ids/c-gone")
	return owner
}

func waitGone(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	for range 100 {
		ok, _, err := c.Exists(path)
		must(t, "exists", err)
		if !ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s is still there after its session closed", path)
}

// churn writes outside /consumers until stopped, so that a live copy races with the server.
func churn(t *testing.T, addr string) (stop func()) {
	c := dial(t, addr)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := c.Set("/other", []byte(strconv.Itoa(i)), -1); err != nil {
				return
			}
		}
	}()
	return func() { close(done); <-finished; c.Close() }
}

// serverZxid is the server's last zxid, from the srvr four-letter word.
func serverZxid(t *testing.T, addr string) int64 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	must(t, "dial", err)
	defer c.Close()
	_, err = c.Write([]byte("srvr"))
	must(t, "srvr", err)
	out, err := io.ReadAll(c)
	must(t, "srvr", err)
	m := regexp.MustCompile(`Zxid: 0x([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("srvr answered %q: no Zxid", out)
	}
	z, err := strconv.ParseInt(string(m[1]), 16, 64)
	must(t, "zxid", err)
	return z
}

func openLive(t *testing.T, ctx context.Context, servers string) migrate.LegacyStore {
	t.Helper()
	r, err := zkreader.Open(ctx, zkreader.Config{Servers: servers})
	must(t, "open live", err)
	t.Cleanup(r.Close)
	return r
}

func open(t *testing.T, ctx context.Context, cfg datadir.Config) *datadir.Store {
	t.Helper()
	s, err := datadir.Open(ctx, cfg)
	must(t, "open "+cfg.Path, err)
	return s
}

func fingerprint(t *testing.T, ctx context.Context, l migrate.LegacyStore) string {
	t.Helper()
	f, err := migrate.NewFilter(nil, "", "", "")
	must(t, "filter", err)
	in, err := migrate.ReadInputs(ctx, l, migrate.NoKafka{}, f) // the fingerprint covers the legacy side alone
	must(t, "read inputs", err)
	if len(in.Legacy) < 6 {
		t.Fatalf("read %d groups, want the 7 seeded", len(in.Legacy))
	}
	return migrate.Fingerprint(in)
}

func readGroup(t *testing.T, ctx context.Context, s *datadir.Store, group string) migrate.LegacyGroup {
	t.Helper()
	var out migrate.LegacyGroup
	must(t, "read "+group, s.ReadGroups(ctx, []string{group}, func(g migrate.LegacyGroup) error { out = g; return nil }))
	return out
}

// checkOffline opens the copy at the live read's zxid and checks it plans as the live read did.
func checkOffline(t *testing.T, ctx context.Context, dir, chroot string, zxid int64, live, what string) *datadir.Store {
	t.Helper()
	s := open(t, ctx, datadir.Config{Path: dir, Chroot: chroot, Zxid: zxid})
	info := s.Info()
	t.Logf("%s: %s, zxid %#x, logs %d, warnings %q", what, filepath.Base(info.Snapshot), info.Zxid, len(info.Logs), info.Warnings)
	if info.Zxid != zxid {
		t.Errorf("%s: reached zxid %#x, want %#x", what, info.Zxid, zxid)
	}
	if got := fingerprint(t, ctx, s); got != live {
		t.Errorf("%s: offline fingerprint %s, live %s", what, got, live)
	}
	return s
}

// copyDir copies a data directory file by file, as a backup job would.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	must(t, "copy "+src, err)
	return dst
}

func countFiles(t *testing.T, dir string) (snaps, logs int) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "version-2"))
	must(t, "read dir", err)
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "snapshot."):
			snaps++
		case strings.HasPrefix(e.Name(), "log."):
			logs++
		}
	}
	return snaps, logs
}

// secondOpinion has ZooKeeper's own tools read the same files: SnapshotFormatter the snapshot
// the store loaded, TxnLogToolkit (LogFormatter in 3.4) the logs it replayed. The offset
// znodes under the chroot and their values must be those the store found in that snapshot,
// and the last zxid the tools print must be the one the store reached.
func secondOpinion(t *testing.T, ctx context.Context, srv server, dir, chroot string, s *datadir.Store) {
	t.Helper()
	info := s.Info()
	// The snapshot alone, as the store reads it: a folder holding only that file.
	only := t.TempDir()
	b, err := os.ReadFile(info.Snapshot)
	must(t, "read snapshot", err)
	single := filepath.Join(only, filepath.Base(info.Snapshot))
	must(t, "write snapshot", os.WriteFile(single, b, 0o644))
	snap := open(t, ctx, datadir.Config{Path: single, Chroot: chroot})
	ours := offsetsOf(t, ctx, snap)

	theirs, withData := snapshotFormatter(t, srv, info.Snapshot, chroot+"/consumers/")
	if len(theirs) != len(ours) {
		t.Errorf("SnapshotFormatter lists %d offset znodes in %s, the store %d", len(theirs), filepath.Base(info.Snapshot), len(ours))
	}
	for p, v := range ours {
		tv, ok := theirs[p]
		switch {
		case !ok:
			t.Errorf("SnapshotFormatter does not list %s", p)
		case withData && tv != v:
			t.Errorf("%s: SnapshotFormatter says %q, the store %q", p, tv, v)
		}
	}
	last := lastLoggedZxid(t, srv, info.Logs)
	if last != info.Zxid && info.Zxid >= 0 {
		t.Logf("note: the store reached %#x at the live zxid; the logs go on to %#x", info.Zxid, last)
	}
	latest := open(t, ctx, datadir.Config{Path: dir, Chroot: chroot})
	if got := latest.Info().Zxid; got != lastLoggedZxid(t, srv, latest.Info().Logs) {
		t.Errorf("the store reached zxid %#x, ZooKeeper's log tool ends at %#x", got, lastLoggedZxid(t, srv, latest.Info().Logs))
	}
}

// offsetsOf maps every offset znode path of the store to its raw value (the offset, or the
// invalid reason's quoted data is not comparable: only valid offsets carry their number).
func offsetsOf(t *testing.T, ctx context.Context, s *datadir.Store) map[string]string {
	t.Helper()
	groups, err := s.ListGroups(ctx)
	must(t, "list", err)
	out := map[string]string{}
	must(t, "read", s.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error {
		for _, o := range g.Offsets {
			if o.Invalid == "" && o.Note == "" {
				out[o.Path] = strconv.FormatInt(o.Offset, 10)
			} else {
				out[o.Path] = "?"
			}
		}
		return nil
	}))
	return out
}

// snapshotFormatter runs ZooKeeper's SnapshotFormatter over a snapshot and returns the znodes
// of the form <prefix><group>/offsets/<topic>/<partition> with their data (3.5+: -d prints it
// base64-encoded; 3.4 prints no data, withData is then false).
func snapshotFormatter(t *testing.T, srv server, file, prefix string) (map[string]string, bool) {
	t.Helper()
	withData := !strings.HasPrefix(srv.version, "3.4.")
	args := []string{"-cp", srv.libs + "/*", "org.apache.zookeeper.server.SnapshotFormatter"}
	if withData {
		args = append(args, "-d")
	}
	args = append(args, file)
	out, err := exec.Command("java", args...).Output()
	if err != nil {
		t.Fatalf("SnapshotFormatter %s: %v\n%s", file, err, stderrOf(err))
	}
	offset := regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + `[^/]+/offsets/[^/]+/[^/]+$`)
	res := map[string]string{}
	var cur string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "/") {
			cur = ""
			if offset.MatchString(line) {
				cur = line
				res[cur] = ""
			}
			continue
		}
		if cur != "" && withData {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "data = "); ok {
				res[cur] = decodeFormatterData(t, cur, v)
			}
		}
	}
	return res, withData
}

// decodeFormatterData turns SnapshotFormatter's base64 data into the store's comparable form:
// the number for a plain decimal, "?" for anything the plan reads as invalid or noted.
func decodeFormatterData(t *testing.T, path, b64 string) string {
	t.Helper()
	if _, err := zkreader.ParsePartition(filepath.Base(path)); err != nil {
		return "?"
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	must(t, "base64", err)
	v, note, err := zkreader.ParseOffsetNote(raw)
	if err != nil || note != "" {
		return "?"
	}
	return strconv.FormatInt(v, 10)
}

// lastLoggedZxid is the last zxid ZooKeeper's own log tool prints over the given logs.
func lastLoggedZxid(t *testing.T, srv server, logs []string) int64 {
	t.Helper()
	class := "org.apache.zookeeper.server.persistence.TxnLogToolkit"
	if strings.HasPrefix(srv.version, "3.4.") {
		class = "org.apache.zookeeper.server.LogFormatter"
	}
	zre := regexp.MustCompile(`zxid:? ?0x([0-9a-f]+)`)
	var last int64 = -1
	for _, l := range logs {
		out, err := exec.Command("java", "-cp", srv.libs+"/*", class, l).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "EOF") {
			t.Fatalf("%s %s: %v\n%s", class, l, err, out)
		}
		for _, m := range zre.FindAllSubmatch(out, -1) {
			z, _ := strconv.ParseInt(string(m[1]), 16, 64)
			last = max(last, z)
		}
	}
	return last
}
