package zkreader

import (
	"context"
	"errors"
	"os"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// testEnv is one integration test's corner of the shared ZooKeeper: a unique root znode that
// plays the chroot, and an admin Reader on the real root that deletes it at the end.
type testEnv struct {
	zk    string  // host:port
	root  string  // "/zk2kafka-test-<name>-<rand>"
	admin *Reader // no chroot; authenticated as adminAuth so it can delete ACL-protected znodes
}

// adminAuth is the digest identity of the admin Reader; tests protect znodes for it.
const (
	adminUser = "zk2kafka-admin"
	adminPass = "admin-secret"
)

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	return newEnvAt(t, stacktest.Get(t).ZK)
}

// newEnvAt is newEnv on the ZooKeeper at addr (one that a test started).
func newEnvAt(t testing.TB, addr string) *testEnv {
	t.Helper()
	e := &testEnv{zk: addr, root: "/" + stacktest.Name(t, "zk2kafka-test")}
	e.admin = openT(t, Config{Servers: addr, Auth: "digest:" + adminUser + ":" + adminPass})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := e.admin.deleteTree(ctx, e.root); err != nil {
			t.Errorf("delete test root %s: %v", e.root, err)
		}
	})
	return e
}

// servers is the connect string of the test root as a chroot.
func (e *testEnv) servers() string { return e.zk + e.root }

// envSingleReads runs the package's stack tests on the single-request path even where the
// server serves multiRead (scripts/test runs them once each way on the zk profile).
const envSingleReads = "ZK2KAFKA_TEST_SINGLE_READS"

func openT(t testing.TB, cfg Config) *Reader {
	t.Helper()
	if os.Getenv(envSingleReads) != "" {
		cfg.NoMultiRead = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open(%v): %v", cfg, err)
	}
	t.Cleanup(r.Close)
	return r
}

// create makes the znode root+rel with data and acl, its missing parents with an open ACL.
func (e *testEnv) create(t testing.TB, rel, data string, acl []zk.ACL) {
	t.Helper()
	c := e.admin.conns[0]
	p := e.root + rel
	if err := ensurePath(c, path.Dir(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(p, []byte(data), zk.FlagPersistent, acl); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

// deleteTree removes p and everything below it. Each level is pipelined: children are deleted
// at once, and only those with children of their own are descended into. A missing p is fine.
func (r *Reader) deleteTree(ctx context.Context, p string) error {
	kids, err := r.children(ctx, "read", "", []string{p})
	if err != nil {
		return err
	}
	names := kids[0].names
	notEmpty := make([]bool, len(names))
	err = r.fanOut(ctx, len(names), func(c *zk.Conn, i int) error {
		err := c.Delete(p+"/"+names[i], -1)
		switch {
		case errors.Is(err, zk.ErrNotEmpty):
			notEmpty[i] = true
		case err != nil && !errors.Is(err, zk.ErrNoNode):
			return wrapPath(p+"/"+names[i], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Descend outside fanOut: a call must never wait for other calls (see calls in pool.go).
	errs := make(chan error, len(names))
	n := 0
	for i, k := range names {
		if notEmpty[i] {
			n++
			go func() { errs <- r.deleteTree(ctx, p+"/"+k) }()
		}
	}
	for range n {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return err
	}
	return r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return wrapPath(p, err)
		}
		return nil
	})
}

// readAll reads groups and returns them by name, failing the test on an error or a group
// emitted twice.
func readAll(t testing.TB, r *Reader, groups []string) map[string]migrate.LegacyGroup {
	t.Helper()
	got := map[string]migrate.LegacyGroup{}
	err := r.ReadGroups(context.Background(), groups, func(g migrate.LegacyGroup) error {
		if _, dup := got[g.Group]; dup {
			t.Errorf("group %q emitted twice", g.Group)
		}
		got[g.Group] = g
		return nil
	})
	if err != nil {
		t.Fatalf("ReadGroups: %v", err)
	}
	return got
}
