package zkreader

import (
	"context"
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/contract"
)

// The contract suites of migrate/contract against the real reader, watcher and writer, as the
// fakes of migrate/migratetest run them in unit tests. Each case gets a tree of its own (a
// fresh chroot) arranged with raw ZooKeeper calls on the admin session, never through the
// code under test.

func TestLegacyStoreContract(t *testing.T) {
	contract.TestLegacyStore(t, func(t *testing.T) (migrate.LegacyStore, contract.Legacy) {
		l := newZKLegacy(t)
		return openT(t, Config{Servers: l.e.servers()}), l
	})
}

func TestLegacyRecheckerContract(t *testing.T) {
	contract.TestLegacyRechecker(t, func(t *testing.T) (migrate.LegacyRechecker, contract.Legacy) {
		l := newZKLegacy(t)
		return openT(t, Config{Servers: l.e.servers()}), l
	})
}

func TestLegacyOffsetWriterContract(t *testing.T) {
	contract.TestLegacyOffsetWriter(t, func(t *testing.T) (migrate.LegacyOffsetWriter, contract.Legacy) {
		l := newZKLegacy(t)
		return openT(t, Config{Servers: l.e.servers()}), l
	})
}

// TestLegacyWatcherContract runs the suite on both paths of the watcher: the persistent
// recursive watch (ZooKeeper 3.6+) and the one-shot watches (forced here, as older servers get).
func TestLegacyWatcherContract(t *testing.T) {
	forWatchPaths(t, func(t *testing.T, oneShot bool) {
		contract.TestLegacyWatcher(t, watcherHarness(newZKLegacy, oneShot))
	})
}

// watcherHarness opens a watcher over a legacy tree from legacy, whose connection can be cut
// for the expiry case.
func watcherHarness(legacy func(*testing.T) *zkLegacy, oneShot bool) contract.LegacyWatcherHarness {
	return func(t *testing.T) contract.WatcherSetup {
		l := legacy(t)
		d := &cuttable{}
		// The server's minimum session timeout (2 x tickTime): the expiry case waits for it.
		const timeout = 4 * time.Second
		w := openWatcherT(t, Config{Servers: l.e.servers(), SessionTimeout: timeout}, oneShot, d.dial)
		return contract.WatcherSetup{Watcher: w, Legacy: l, Expire: func(t *testing.T, during func()) {
			d.setCut(true)
			during()
			// Long enough for the server to expire the cut session; not an assertion.
			time.Sleep(2 * timeout)
			d.setCut(false)
		}}
	}
}

// zkLegacy is contract.Legacy over one test root of the shared ZooKeeper, written through the
// admin session with raw calls.
type zkLegacy struct {
	e *testEnv
	c *zk.Conn
}

func newZKLegacy(t *testing.T) *zkLegacy { return newZKLegacyOn(t, newEnv(t)) }

func newZKLegacyOn(t *testing.T, e *testEnv) *zkLegacy {
	l := &zkLegacy{e: e, c: e.admin.conns[0]}
	// The root plays the chroot: it exists, /consumers below it does not yet.
	if err := ensurePath(l.c, e.root); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *zkLegacy) group(g string) string { return l.e.root + "/consumers/" + g }

func (l *zkLegacy) offset(g, topic string, p int32) string {
	return fmt.Sprintf("%s/offsets/%s/%d", l.group(g), topic, p)
}

// put sets p's data, creating p (with acl) and its parents when missing.
func (l *zkLegacy) put(t testing.TB, p string, data []byte, acl []zk.ACL) {
	t.Helper()
	if err := ensurePath(l.c, path.Dir(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.c.Set(p, data, -1); err == nil {
		return
	} else if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("set %s: %v", p, err)
	}
	if _, err := l.c.Create(p, data, zk.FlagPersistent, acl); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

func (l *zkLegacy) CreateGroup(t testing.TB, group string) {
	if err := ensurePath(l.c, l.group(group)); err != nil {
		t.Fatal(err)
	}
}

func (l *zkLegacy) SetOffset(t testing.TB, group, topic string, p int32, offset int64) {
	l.put(t, l.offset(group, topic, p), fmt.Appendf(nil, "%d", offset), zk.WorldACL(zk.PermAll))
}

func (l *zkLegacy) SetBad(t testing.TB, group, topic string, p int32, bad contract.Bad) {
	open := zk.WorldACL(zk.PermAll)
	switch bad {
	case contract.BadSentinel:
		l.put(t, l.offset(group, topic, p), []byte("-1"), open)
	case contract.BadEmpty:
		l.put(t, l.offset(group, topic, p), nil, open)
	case contract.BadText:
		l.put(t, l.offset(group, topic, p), []byte("twelve"), open)
	case contract.BadLegacyName:
		l.put(t, fmt.Sprintf("%s/offsets/%s/0-%d", l.group(group), topic, p), []byte("5"), open)
	case contract.BadDenied:
		// Readable only by the admin: the store's session (no credentials) is denied.
		private := append(zk.DigestACL(zk.PermAll, adminUser, adminPass), zk.ACL{Perms: zk.PermAdmin, Scheme: "world", ID: "anyone"})
		l.DeleteOffset(t, group, topic, p)
		l.put(t, l.offset(group, topic, p), []byte("5"), private)
	case contract.Padded:
		l.put(t, l.offset(group, topic, p), fmt.Appendf(nil, " %d\n", contract.PaddedOffset), open)
	default:
		t.Fatalf("bad znode kind %v", bad)
	}
}

func (l *zkLegacy) DeleteOffset(t testing.TB, group, topic string, p int32) {
	if err := l.c.Delete(l.offset(group, topic, p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
}

func (l *zkLegacy) DeleteGroup(t testing.TB, group string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.e.admin.deleteTree(ctx, l.group(group)); err != nil {
		t.Fatal(err)
	}
}

// Register creates the ephemeral registrations the Scala consumer creates, on the admin
// session: ids/<id> with its JSON, owners/<topic>/<partition> holding "<id>-0".
func (l *zkLegacy) Register(t testing.TB, group, id string, owned ...migrate.TopicPartition) func() {
	t.Helper()
	nodes := map[string][]byte{l.group(group) + "/ids/" + id: []byte(`{"version":1,"subscription":{},"pattern":"static","timestamp":"0"}`)}
	for _, o := range owned {
		nodes[fmt.Sprintf("%s/owners/%s/%d", l.group(group), o.Topic, o.Partition)] = []byte(id + "-0")
	}
	for p, data := range nodes {
		if err := ensurePath(l.c, path.Dir(p)); err != nil {
			t.Fatal(err)
		}
		if _, err := l.c.Create(p, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("register %s: %v", p, err)
		}
	}
	return func() {
		for p := range nodes {
			if err := l.c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				t.Errorf("unregister %s: %v", p, err)
			}
		}
	}
}

func (l *zkLegacy) Read(t testing.TB, group, topic string, p int32) (string, bool) {
	data, _, err := l.c.Get(l.offset(group, topic, p))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "", false
	case err != nil:
		t.Fatal(err)
	}
	return string(data), true
}

func (l *zkLegacy) GroupExists(t testing.TB, group string) bool {
	ok, _, err := l.c.Exists(l.group(group))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
