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

// TestStormStoreContract runs the LegacyStore suite on a wildcard storm-kafka spout (one topic
// folder per topic), arranged with raw znodes as storm-kafka writes them. Where Storm differs
// the suite checks the documented behaviour: one group, JSON data, liveness unknown, read-only.
func TestStormStoreContract(t *testing.T) {
	const group = "g"
	lay := contract.Layout{
		OneGroup: group,
		Path: func(_, topic string, p int32) string {
			return fmt.Sprintf("/storm/offsets/spout/%s/partition_%d", topic, p)
		},
		FixedLiveness: true, Liveness: []string{StormUnknownLiveness},
		PaddedWithoutNote: true,
		ReadOnly:          true,
	}
	contract.TestLegacyStoreLayout(t, lay, func(t *testing.T) (migrate.LegacyStore, contract.Legacy) {
		l := &stormLegacy{zkLegacy: newZKLegacy(t), group: group}
		return openStormT(t, l.e, StormLayout{Root: "/storm/offsets", SpoutID: "spout", Group: group}), l
	})
}

// stormLegacy is contract.Legacy over one spout's folder: the group is the spout.
type stormLegacy struct {
	*zkLegacy
	group string
}

func (l *stormLegacy) spout() string { return l.e.root + "/storm/offsets/spout" }

func (l *stormLegacy) znode(topic string, p int32) string {
	return fmt.Sprintf("%s/%s/partition_%d", l.spout(), topic, p)
}

func (l *stormLegacy) mine(t testing.TB, group string) {
	t.Helper()
	if group != l.group {
		t.Fatalf("group %q: the storm store holds only %q", group, l.group)
	}
}

func (l *stormLegacy) CreateGroup(t testing.TB, group string) {
	l.mine(t, group)
	if err := ensurePath(l.c, l.spout()); err != nil {
		t.Fatal(err)
	}
}

func (l *stormLegacy) SetOffset(t testing.TB, group, topic string, p int32, offset int64) {
	l.mine(t, group)
	l.put(t, l.znode(topic, p), []byte(stormZnode(fmt.Sprint(offset), fmt.Sprint(p), topic)), zk.WorldACL(zk.PermAll))
}

func (l *stormLegacy) SetBad(t testing.TB, group, topic string, p int32, bad contract.Bad) {
	l.mine(t, group)
	open := zk.WorldACL(zk.PermAll)
	switch bad {
	case contract.BadSentinel:
		l.put(t, l.znode(topic, p), []byte(stormZnode("-1", fmt.Sprint(p), topic)), open)
	case contract.BadEmpty:
		l.put(t, l.znode(topic, p), nil, open)
	case contract.BadText:
		l.put(t, l.znode(topic, p), []byte("twelve"), open)
	case contract.BadLegacyName:
		l.put(t, fmt.Sprintf("%s/%s/0-%d", l.spout(), topic, p), []byte(stormZnode("5", fmt.Sprint(p), topic)), open)
	case contract.BadDenied:
		private := append(zk.DigestACL(zk.PermAll, adminUser, adminPass), zk.ACL{Perms: zk.PermAdmin, Scheme: "world", ID: "anyone"})
		l.DeleteOffset(t, group, topic, p)
		l.put(t, l.znode(topic, p), []byte(stormZnode("5", fmt.Sprint(p), topic)), private)
	case contract.Padded:
		l.put(t, l.znode(topic, p), []byte(" "+stormZnode(fmt.Sprint(contract.PaddedOffset), fmt.Sprint(p), topic)+"\n"), open)
	default:
		t.Fatalf("bad znode kind %v", bad)
	}
}

func (l *stormLegacy) DeleteOffset(t testing.TB, group, topic string, p int32) {
	l.mine(t, group)
	if err := l.c.Delete(l.znode(topic, p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
}

func (l *stormLegacy) DeleteGroup(t testing.TB, group string) {
	l.mine(t, group)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.e.admin.deleteTree(ctx, l.spout()); err != nil {
		t.Fatal(err)
	}
}

// Register is never called: storm-kafka registers nothing (Layout.FixedLiveness).
func (l *stormLegacy) Register(t testing.TB, group, _ string, _ ...migrate.TopicPartition) func() {
	t.Fatalf("register in group %q: storm-kafka registers nothing", group)
	return nil
}

func (l *stormLegacy) Read(t testing.TB, group, topic string, p int32) (string, bool) {
	l.mine(t, group)
	data, _, err := l.c.Get(l.znode(topic, p))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "", false
	case err != nil:
		t.Fatal(err)
	}
	return string(data), true
}

func (l *stormLegacy) GroupExists(t testing.TB, group string) bool {
	ok, _, err := l.c.Exists(path.Clean(l.spout()))
	if err != nil {
		t.Fatal(err)
	}
	return ok && group == l.group
}
