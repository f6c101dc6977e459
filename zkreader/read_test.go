package zkreader

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestChrootRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// A two-level chroot under the test root, as "host:port/kafka/cluster" would be.
	chroot := e.root + "/kafka/cluster"
	w := openT(t, Config{Servers: e.zk + chroot})
	want := map[migrate.TopicPartition]int64{{Topic: "orders", Partition: 0}: 5, {Topic: "orders", Partition: 1}: 1 << 40}
	if err := w.WriteOffsets(ctx, "g1", want); err != nil {
		t.Fatal(err)
	}

	// The znode is where an operator looks for it: under the chroot, on the real root.
	data, _, err := e.admin.conns[0].Get(chroot + "/consumers/g1/offsets/orders/1")
	if err != nil || string(data) != "1099511627776" {
		t.Fatalf("znode under the chroot = %q, %v; want the decimal offset", data, err)
	}

	r := openT(t, Config{Servers: e.zk + chroot, Connections: 2})
	groups, err := r.ListGroups(ctx)
	if err != nil || !slices.Equal(groups, []string{"g1"}) {
		t.Fatalf("ListGroups = %q, %v; want [g1]", groups, err)
	}
	got := readAll(t, r, groups)["g1"]
	if len(got.Offsets) != 2 {
		t.Fatalf("offsets = %+v, want 2", got.Offsets)
	}
	for _, o := range got.Offsets {
		tp := migrate.TopicPartition{Topic: o.Topic, Partition: o.Partition}
		wantPath := chroot + "/consumers/g1/offsets/orders/" + map[int32]string{0: "0", 1: "1"}[o.Partition]
		if o.Invalid != "" || o.Offset != want[tp] || o.Path != wantPath || o.Mtime.IsZero() {
			t.Errorf("offset %+v; want %d at %s with an mtime", o, want[tp], wantPath)
		}
	}

	// Rewriting is an update in place (restore, rollback), not an error.
	want[migrate.TopicPartition{Topic: "orders", Partition: 0}] = 6
	if err := w.WriteOffsets(ctx, "g1", want); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, []string{"g1"})["g1"]; got.Offsets[0].Offset != 6 {
		t.Errorf("after rewrite offset = %+v, want 6", got.Offsets[0])
	}
}

func TestListGroupsMissing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "", "", zk.WorldACL(zk.PermAll))
	// An existing chroot without /consumers: no groups, no error.
	groups, err := openT(t, Config{Servers: e.servers()}).ListGroups(ctx)
	if err != nil || len(groups) != 0 {
		t.Errorf("ListGroups without /consumers = %q, %v; want none", groups, err)
	}
	// A chroot that does not exist is a typo until proven otherwise.
	_, err = openT(t, Config{Servers: e.servers() + "/no-such"}).ListGroups(ctx)
	if err == nil || !strings.Contains(err.Error(), "chroot "+e.root+"/no-such does not exist") {
		t.Errorf("ListGroups on a missing chroot: %v", err)
	}
	// A group without offsets, ids or owners reads as empty.
	got := readAll(t, openT(t, Config{Servers: e.servers()}), []string{"absent"})["absent"]
	if got.Group != "absent" || len(got.Offsets) != 0 || len(got.LiveConsumers) != 0 {
		t.Errorf("absent group = %+v, want empty", got)
	}
}

func TestMalformedCorpus(t *testing.T) {
	e := newEnv(t)
	open := zk.WorldACL(zk.PermAll)
	base := "/consumers/bad/offsets/t/"
	corpus := []struct {
		child, data string
		partition   int32
		offset      int64
		invalid     string // substring; "" means valid
	}{
		{"0", "-1", 0, 0, "sentinel"},
		{"1", "", 1, 0, "empty offset data"},
		{"2", "abc", 2, 0, "not a decimal number"},
		{"3", "99999999999999999999", 3, 0, "beyond the int64 range"},
		{"4", " 42\n", 4, 42, ""},
		{"5", "17", 5, 17, ""},
		{"6", "-7", 6, 0, "negative"},
		{"10", "8", 10, 8, ""}, // listed before "2", read after "6"
		{"12", "x", 12, 0, "not a decimal number"},
		{"0-3", "5", -1, 0, "0.7-era"},
		{"07", "5", -1, 0, "leading zero"},
	}
	for _, c := range corpus {
		e.create(t, base+c.child, c.data, open)
	}
	got := readAll(t, openT(t, Config{Servers: e.servers()}), []string{"bad"})["bad"]
	if len(got.Offsets) != len(corpus) {
		t.Fatalf("read %d offsets, want %d: %+v", len(got.Offsets), len(corpus), got.Offsets)
	}
	// The result's order: by partition number (ZooKeeper lists names as strings), the names
	// that are no partition number (-1) first, by path.
	wantOrder := []string{"0-3", "07", "0", "1", "2", "3", "4", "5", "6", "10", "12"}
	byPath := map[string]migrate.LegacyOffset{}
	for i, o := range got.Offsets {
		byPath[o.Path] = o
		if want := e.root + base + wantOrder[i]; o.Path != want {
			t.Errorf("offset %d is %s, want %s", i, o.Path, want)
		}
	}
	for _, c := range corpus {
		p := e.root + base + c.child
		o, ok := byPath[p]
		if !ok {
			t.Errorf("%s missing from %+v", p, got.Offsets)
			continue
		}
		_, stat, err := e.admin.conns[0].Get(p)
		if err != nil {
			t.Fatal(err)
		}
		if o.Topic != "t" || o.Partition != c.partition || !o.Mtime.Equal(time.UnixMilli(stat.Mtime)) {
			t.Errorf("%s read as %+v; want topic t partition %d mtime %d", p, o, c.partition, stat.Mtime)
		}
		switch {
		case c.invalid == "" && (o.Invalid != "" || o.Offset != c.offset):
			t.Errorf("%s (%q) = %d, invalid %q; want %d", p, c.data, o.Offset, o.Invalid, c.offset)
		case c.invalid != "" && !strings.Contains(o.Invalid, c.invalid):
			t.Errorf("%s (%q) invalid = %q, want it to say %q", p, c.data, o.Invalid, c.invalid)
		}
		// Whitespace around the number is read, and said: the plan shows the note.
		if wantNote := c.invalid == "" && strings.TrimSpace(c.data) != c.data; wantNote != strings.Contains(o.Note, "whitespace around the offset") {
			t.Errorf("%s (%q) note = %q, want a whitespace note: %v", p, c.data, o.Note, wantNote)
		}
	}
}

func TestDigestACL(t *testing.T) {
	e := newEnv(t)
	open := zk.WorldACL(zk.PermAll)
	// Owned by the admin identity, and readable by nobody else.
	private := append(zk.DigestACL(zk.PermAll, adminUser, adminPass), zk.ACL{Perms: zk.PermAdmin, Scheme: "world", ID: "anyone"})
	e.create(t, "/consumers/g/offsets/t/0", "5", private)
	e.create(t, "/consumers/g/offsets/t/1", "6", open)
	e.create(t, "/consumers/g/offsets/hidden", "", private) // the topic's partitions cannot be listed
	e.create(t, "/consumers/g/offsets/hidden/0", "9", open)
	e.create(t, "/consumers/g/ids", "", private) // liveness unknown
	e.create(t, "/consumers/g/owners/t", "", private)
	e.create(t, "/consumers/g/owners/u/0", "g_c1-0", private)
	e.create(t, "/consumers/g/owners/u/1", "g_c1-0", open)
	e.create(t, "/consumers/g2/owners", "", private)

	withAuth := readAll(t, openT(t, Config{Servers: e.servers(), Auth: "digest:" + adminUser + ":" + adminPass}), []string{"g"})["g"]
	wantLive := []string{"owners/u/0=g_c1-0", "owners/u/1=g_c1-0"}
	want := []string{"hidden/0=9", "t/0=5", "t/1=6"}
	if got := summary(withAuth.Offsets); !slices.Equal(got, want) {
		t.Errorf("with auth: offsets %q, want %q", got, want)
	}
	if !slices.Equal(withAuth.LiveConsumers, wantLive) {
		t.Errorf("with auth: live consumers %q, want %q", withAuth.LiveConsumers, wantLive)
	}

	// Without the credentials the run still succeeds; each denied znode says so.
	all := readAll(t, openT(t, Config{Servers: e.servers()}), []string{"g", "g2"})
	anon := all["g"]
	want = []string{"hidden/-1 " + e.root + "/consumers/g/offsets/hidden: access denied (ACL): cannot list the topic's partitions",
		"t/0 " + e.root + "/consumers/g/offsets/t/0: access denied (ACL)", "t/1=6"}
	if got := summary(anon.Offsets); !slices.Equal(got, want) {
		t.Errorf("without auth: offsets\n%q\nwant\n%q", got, want)
	}
	// Unreadable liveness must count as alive.
	wantLive = []string{"ids: access denied (ACL)", "owners/t: access denied (ACL)",
		"owners/u/0: access denied (ACL)", "owners/u/1=g_c1-0"}
	if !slices.Equal(anon.LiveConsumers, wantLive) {
		t.Errorf("without auth: live consumers\n%q\nwant\n%q", anon.LiveConsumers, wantLive)
	}
	if got := all["g2"].LiveConsumers; !slices.Equal(got, []string{"owners: access denied (ACL)"}) {
		t.Errorf("without auth: g2 live consumers %q", got)
	}
}

// summary renders offsets as "topic/partition=offset", or "topic/partition path: reason".
func summary(offsets []migrate.LegacyOffset) []string {
	var out []string
	for _, o := range offsets {
		s := o.Topic + "/" + itoa(o.Partition)
		if o.Invalid != "" {
			s += " " + o.Path + ": " + o.Invalid
		} else {
			s += "=" + itoa(o.Offset)
		}
		out = append(out, s)
	}
	return out
}

func itoa[T int32 | int64](v T) string { return strconv.FormatInt(int64(v), 10) }
