package zkreader

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// stormJSON is a partition znode as storm-kafka 1.2's PartitionManager.commit writes it
// (json-simple's key order; e2e/storm_test.go has Storm's own code write them).
const stormJSON = `{"topology":{"id":"top-1-1700000000","name":"top"},"offset":%s,"partition":%s,"broker":{"host":"b1","port":9092},"topic":%s}`

func TestParseStormOffset(t *testing.T) {
	full := func(offset, partition, topic string) string {
		r := strings.Replace(stormJSON, "%s", offset, 1)
		r = strings.Replace(r, "%s", partition, 1)
		return strings.Replace(r, "%s", topic, 1)
	}
	tests := []struct {
		name      string
		data      string
		partition int32
		dir       string // the wildcard layout's topic folder, or ""
		want      StormOffset
		wantErr   string // substring of the reason; "" means success
	}{
		{name: "as storm writes it", data: full("42", "3", `"orders"`), partition: 3, want: StormOffset{"orders", 3, 42}},
		{name: "offset zero", data: full("0", "0", `"orders"`), want: StormOffset{"orders", 0, 0}},
		{name: "max int64", data: full("9223372036854775807", "1", `"t"`), partition: 1, want: StormOffset{"t", 1, 9223372036854775807}},
		{name: "only the fields read", data: `{"offset":7,"partition":2,"topic":"t"}`, partition: 2, want: StormOffset{"t", 2, 7}},
		{name: "wildcard folder matches", data: full("5", "0", `"logs-a"`), dir: "logs-a", want: StormOffset{"logs-a", 0, 5}},
		{name: "surrounding whitespace", data: " \n" + full("5", "0", `"t"`) + "\n", want: StormOffset{"t", 0, 5}},

		{name: "empty", data: "", wantErr: "empty znode data"},
		{name: "not json", data: "42", wantErr: "not a JSON object"},
		{name: "array", data: `[1,2]`, wantErr: "not a JSON object"},
		{name: "null", data: `null`, wantErr: "not a JSON object"},
		{name: "truncated", data: `{"offset":4`, wantErr: "not a JSON object"},
		{name: "offset missing", data: `{"partition":0,"topic":"t"}`, wantErr: `field "offset" is missing`},
		{name: "offset string", data: full(`"42"`, "0", `"t"`), wantErr: `field "offset" is "\"42\"", not a number`},
		{name: "offset null", data: full(`null`, "0", `"t"`), wantErr: `field "offset" is "null", not a number`},
		{name: "offset fraction", data: full(`4.5`, "0", `"t"`), wantErr: `field "offset" is "4.5", not an integer`},
		{name: "offset exponent", data: full(`4e3`, "0", `"t"`), wantErr: `field "offset" is "4e3", not an integer`},
		{name: "offset negative", data: full(`-1`, "0", `"t"`), wantErr: `field "offset" is -1, negative`},
		{name: "offset too big", data: full(`9223372036854775808`, "0", `"t"`), wantErr: `field "offset" is "9223372036854775808", beyond the int64 range`},
		{name: "partition missing", data: `{"offset":1,"topic":"t"}`, wantErr: `field "partition" is missing`},
		{name: "partition string", data: full("1", `"0"`, `"t"`), wantErr: `field "partition" is "\"0\"", not a number`},
		{name: "partition beyond int32", data: full("1", `2147483648`, `"t"`), wantErr: `field "partition" is 2147483648, beyond the int32 range`},
		{name: "partition differs from the name", data: full("1", "4", `"t"`), partition: 3, wantErr: `field "partition" is 4, but the znode is partition_3`},
		{name: "topic missing", data: `{"offset":1,"partition":0}`, wantErr: `field "topic" is missing`},
		{name: "topic number", data: full("1", "0", `5`), wantErr: `field "topic" is "5", not a string`},
		{name: "topic empty", data: full("1", "0", `""`), wantErr: `field "topic" is empty`},
		{name: "topic differs from the folder", data: full("1", "0", `"b"`), dir: "a", wantErr: `field "topic" is "b", but the znode is under the topic directory "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStormOffset([]byte(tt.data), tt.partition, tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseStormOffset(%s) = %+v, %v; want an error containing %q", tt.data, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseStormOffset(%s) = %+v, %v; want %+v", tt.data, got, err, tt.want)
			}
		})
	}
}

// TestParseStormOffsetNamesTheTopicOnOtherErrors: a znode whose topic is readable is reported
// under that topic even when another field is bad, so the plan names the partition.
func TestParseStormOffsetNamesTheTopicOnOtherErrors(t *testing.T) {
	got, err := ParseStormOffset([]byte(`{"offset":"x","partition":0,"topic":"orders"}`), 0, "")
	if err == nil || got.Topic != "orders" {
		t.Fatalf("got %+v, %v; want topic orders and an error", got, err)
	}
}

func TestParseStormPartition(t *testing.T) {
	tests := []struct {
		in      string
		want    int32
		wantErr string
	}{
		{in: "partition_0", want: 0},
		{in: "partition_17", want: 17},
		{in: "partition_2147483647", want: 2147483647},
		{in: "partition_", wantErr: "empty partition name"},
		{in: "partition_07", wantErr: "leading zero"},
		{in: "partition_-1", wantErr: "not a partition number"},
		{in: "partition_2147483648", wantErr: "beyond the int32 range"},
		{in: "3", wantErr: "not a storm-kafka partition_<N> name"},
		{in: "Partition_3", wantErr: "not a storm-kafka partition_<N> name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStormPartition(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseStormPartition(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseStormPartition(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestStormLayoutValidate(t *testing.T) {
	ok := StormLayout{Root: "/kafka-spout-offsets", SpoutID: "spout", Group: "g"}
	tests := []struct {
		name    string
		edit    func(*StormLayout)
		wantErr string
	}{
		{name: "ok", edit: func(*StormLayout) {}},
		{name: "root is /", edit: func(l *StormLayout) { l.Root = "/" }},
		{name: "nested root", edit: func(l *StormLayout) { l.Root = "/storm/offsets" }},
		{name: "relative root", edit: func(l *StormLayout) { l.Root = "offsets" }, wantErr: "expected an absolute path"},
		{name: "empty root", edit: func(l *StormLayout) { l.Root = "" }, wantErr: "expected an absolute path"},
		{name: "trailing slash", edit: func(l *StormLayout) { l.Root = "/offsets/" }, wantErr: "trailing"},
		{name: "double slash", edit: func(l *StormLayout) { l.Root = "/a//b" }, wantErr: "empty path component"},
		{name: "spout id with slash", edit: func(l *StormLayout) { l.SpoutID = "a/b" }, wantErr: "contains '/'"},
		{name: "no spout id", edit: func(l *StormLayout) { l.SpoutID = "" }, wantErr: "storm spout id"},
		{name: "no group", edit: func(l *StormLayout) { l.Group = "" }, wantErr: "storm group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ok
			tt.edit(&l)
			err := l.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate(%+v): %v", l, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate(%+v) = %v; want an error containing %q", l, err, tt.wantErr)
			}
		})
	}
}

func stormZnode(offset, partition, topic string) string {
	r := strings.Replace(stormJSON, "%s", offset, 1)
	r = strings.Replace(r, "%s", partition, 1)
	return strings.Replace(r, "%s", `"`+topic+`"`, 1)
}

func openStormT(t *testing.T, e *testEnv, l StormLayout) *StormStore {
	t.Helper()
	s, err := NewStormStore(openT(t, Config{Servers: e.servers()}), l)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readStorm(t *testing.T, s *StormStore, group string) migrate.LegacyGroup {
	t.Helper()
	var got []migrate.LegacyGroup
	if err := s.ReadGroups(context.Background(), []string{group}, func(g migrate.LegacyGroup) error {
		got = append(got, g)
		return nil
	}); err != nil {
		t.Fatalf("ReadGroups: %v", err)
	}
	if len(got) != 1 || got[0].Group != group {
		t.Fatalf("ReadGroups(%s) emitted %+v", group, got)
	}
	return got[0]
}

// brief is each offset as "<topic>/<znode name>=<offset>" or "<topic>/<znode name>!<reason>".
func brief(offsets []migrate.LegacyOffset) []string {
	var out []string
	for _, o := range offsets {
		name := o.Path[strings.LastIndexByte(o.Path, '/')+1:]
		if o.Invalid != "" {
			out = append(out, fmt.Sprintf("%s/%s!%s", o.Topic, name, o.Invalid))
		} else {
			out = append(out, fmt.Sprintf("%s/%s=%d", o.Topic, name, o.Offset))
		}
	}
	return out
}

// TestStormStoreReads reads both storm-kafka layouts from a real ZooKeeper: a one-topic spout's
// partition_<N> znodes and a wildcard spout's <topic>/partition_<N>, with every kind of bad
// znode reported as invalid under the field at fault, and the group's liveness unknown until
// the operator says the topology is stopped.
func TestStormStoreReads(t *testing.T) {
	e := newEnv(t)
	open := zk.WorldACL(zk.PermAll)
	e.create(t, "/storm/offsets/one/partition_0", stormZnode("10", "0", "orders"), open)
	e.create(t, "/storm/offsets/one/partition_1", stormZnode("11", "1", "orders"), open)
	e.create(t, "/storm/offsets/one/partition_2", stormZnode("12", "5", "orders"), open) // partition differs
	e.create(t, "/storm/offsets/one/partition_3", `{"offset":"13","partition":3,"topic":"orders"}`, open)
	e.create(t, "/storm/offsets/one/partition_4", `not json`, open)
	e.create(t, "/storm/offsets/one/partition_10", stormZnode("100", "10", "orders"), open) // sorted as a number
	e.create(t, "/storm/offsets/wild/logs-a/partition_0", stormZnode("7", "0", "logs-a"), open)
	e.create(t, "/storm/offsets/wild/logs-b/partition_0", stormZnode("8", "0", "logs-a"), open) // topic differs
	e.create(t, "/storm/offsets/wild/logs-b/partition_1", stormZnode("9", "1", "logs-b"), open)
	e.create(t, "/storm/offsets/wild/logs-b/junk", "{}", open)

	tests := []struct {
		name, spout string
		stopped     bool
		want        []string
	}{
		{name: "one topic", spout: "one", want: []string{
			"/partition_4!storm JSON: data \"not json\" is not a JSON object",
			"orders/partition_0=10",
			"orders/partition_1=11",
			"orders/partition_2!storm JSON: field \"partition\" is 5, but the znode is partition_2",
			"orders/partition_3!storm JSON: field \"offset\" is \"\\\"13\\\"\", not a number",
			"orders/partition_10=100",
		}},
		{name: "wildcard", spout: "wild", stopped: true, want: []string{
			"logs-a/partition_0=7",
			"logs-b/junk!znode name \"junk\" is not a storm-kafka partition_<N> name",
			"logs-b/partition_0!storm JSON: field \"topic\" is \"logs-a\", but the znode is under the topic directory \"logs-b\"",
			"logs-b/partition_1=9",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStormT(t, e, StormLayout{Root: "/storm/offsets", SpoutID: tt.spout, Group: "kafka-" + tt.spout, Stopped: tt.stopped})
			groups, err := s.ListGroups(context.Background())
			if err != nil || !slices.Equal(groups, []string{"kafka-" + tt.spout}) {
				t.Fatalf("ListGroups = %v, %v; want [kafka-%s]", groups, err, tt.spout)
			}
			g := readStorm(t, s, "kafka-"+tt.spout)
			if got := brief(g.Offsets); !slices.Equal(got, tt.want) {
				t.Errorf("offsets:\n got %q\nwant %q", got, tt.want)
			}
			for _, o := range g.Offsets {
				if !strings.HasPrefix(o.Path, e.root+"/storm/offsets/"+tt.spout+"/") || o.Mtime.IsZero() != (o.Partition < 0) {
					t.Errorf("offset %+v: want the full znode path under the chroot %s and the mtime of each znode read", o, e.root)
				}
			}
			wantLive := []string{StormUnknownLiveness}
			if tt.stopped {
				wantLive = nil
			}
			if !slices.Equal(g.LiveConsumers, wantLive) {
				t.Errorf("LiveConsumers = %q, want %q", g.LiveConsumers, wantLive)
			}
			if other := readStorm(t, s, "some-other-group"); len(other.Offsets) != 0 {
				t.Errorf("another group has offsets: %+v", other)
			}
		})
	}
	t.Run("missing spout", func(t *testing.T) {
		s := openStormT(t, e, StormLayout{Root: "/storm/offsets", SpoutID: "nope", Group: "g"})
		if groups, err := s.ListGroups(context.Background()); err != nil || len(groups) != 0 {
			t.Fatalf("ListGroups = %v, %v; want none", groups, err)
		}
		if got := s.GroupsRoot(); got != e.root+"/storm/offsets/nope" {
			t.Errorf("GroupsRoot = %s", got)
		}
	})
}

// TestStormStoreRecheck: copy's re-check reads the planned znodes again by path, sees a new
// offset, a deleted znode and a topic changed under the plan, and refuses a path outside the
// spout's folder.
func TestStormStoreRecheck(t *testing.T) {
	e := newEnv(t)
	open := zk.WorldACL(zk.PermAll)
	e.create(t, "/so/sp/partition_0", stormZnode("10", "0", "orders"), open)
	e.create(t, "/so/sp/partition_1", stormZnode("11", "1", "orders"), open)
	e.create(t, "/so/sp/partition_2", stormZnode("12", "2", "orders"), open)
	e.create(t, "/so/w/t/partition_0", stormZnode("3", "0", "t"), open)
	s := openStormT(t, e, StormLayout{Root: "/so", SpoutID: "sp", Group: "g", Stopped: true})
	planned := readStorm(t, s, "g").Offsets
	c := e.admin.conns[0]
	for p, data := range map[string]string{"/so/sp/partition_0": stormZnode("20", "0", "orders"), "/so/sp/partition_2": stormZnode("12", "2", "other")} {
		if _, err := c.Set(e.root+p, []byte(data), -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete(e.root+"/so/sp/partition_1", -1); err != nil {
		t.Fatal(err)
	}
	got, err := s.RecheckGroups(context.Background(), []migrate.RecheckRequest{{Group: "g", Offsets: planned}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"orders/partition_0=20", "orders/partition_2!storm JSON: field \"topic\" is now \"other\", was \"orders\" when planned"}
	if len(got) != 1 || !slices.Equal(brief(got[0].Offsets), want) || got[0].LiveConsumers != nil {
		t.Fatalf("RecheckGroups = %+v\nwant offsets %q and no liveness", got, want)
	}

	w := openStormT(t, e, StormLayout{Root: "/so", SpoutID: "w", Group: "g"})
	got, err = w.RecheckGroups(context.Background(), []migrate.RecheckRequest{{Group: "g", Offsets: readStorm(t, w, "g").Offsets}})
	if err != nil || !slices.Equal(brief(got[0].Offsets), []string{"t/partition_0=3"}) || len(got[0].LiveConsumers) != 1 {
		t.Fatalf("wildcard RecheckGroups = %+v, %v", got, err)
	}

	for _, bad := range []migrate.LegacyOffset{
		{Topic: "orders", Partition: 0, Path: e.root + "/consumers/g/offsets/orders/0"},
		{Topic: "orders", Partition: 0, Path: e.root + "/so/sp/0"},
		{Topic: "other", Partition: 0, Path: e.root + "/so/sp/orders/partition_0"},
	} {
		if _, err := s.RecheckGroups(context.Background(), []migrate.RecheckRequest{{Group: "g", Offsets: []migrate.LegacyOffset{bad}}}); err == nil ||
			!strings.Contains(err.Error(), bad.Path) {
			t.Errorf("RecheckGroups(%s) = %v; want an error naming the znode", bad.Path, err)
		}
	}
}

// TestStormWatcher: the watcher reports the spout's group when a partition znode is updated in
// place (as ZkState.writeJSON does), when a wildcard topic folder and its znodes appear, and
// the list when the spout's folder is created; on both paths (a recursive watch on the spout's
// folder on ZooKeeper 3.6+, one-shot watches otherwise).
func TestStormWatcher(t *testing.T) {
	forWatchPaths(t, testStormWatcher)
}

func testStormWatcher(t *testing.T, oneShot bool) {
	e := newEnv(t)
	ctx := context.Background()
	open := zk.WorldACL(zk.PermAll)
	e.create(t, "/so/other/partition_0", stormZnode("1", "0", "t"), open) // the root exists
	w, err := OpenStormWatcher(ctx, Config{Servers: e.servers(), NoPersistentWatch: oneShot}, StormLayout{Root: "/so", SpoutID: "sp", Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	persistent := w.persistent.Load()
	if oneShot && persistent {
		t.Fatal("one-shot watches asked for, the persistent watch taken")
	}
	c := startWatch(t, w, "g")
	e.create(t, "/so/sp/partition_0", stormZnode("5", "0", "t"), open)
	c.listed(t, "the spout's folder created")
	c.expect(t, "g", "the spout's folder created")
	cn := e.admin.conns[0]
	set := func(p, data string) {
		t.Helper()
		if _, err := cn.Set(e.root+p, []byte(data), -1); err != nil {
			t.Fatal(err)
		}
	}
	// One-shot: partition_0's data watch is armed after the report of its creation; wait for it.
	if !persistent {
		waitArmed(t, w, e.root+"/so/sp/partition_0")
	}
	set("/so/sp/partition_0", stormZnode("6", "0", "t"))
	c.expect(t, "g", "partition_0 updated in place")
	e.create(t, "/so/sp/logs/partition_3", stormZnode("9", "3", "logs"), open)
	c.expect(t, "g", "a wildcard topic folder created")
	if !persistent {
		waitArmed(t, w, e.root+"/so/sp/logs/partition_3")
	}
	set("/so/sp/logs/partition_3", stormZnode("10", "3", "logs"))
	c.expect(t, "g", "a wildcard partition updated")
	// Another spout under the same root is not watched (only the root's children are, on
	// one-shot watches; the spout's folder alone on the persistent one).
	w.armedMu.Lock()
	defer w.armedMu.Unlock()
	if persistent && (w.added.Load() == 0 || len(w.armed) != 0) {
		t.Errorf("persistent path: watch added %d times, %d one-shot watches", w.added.Load(), len(w.armed))
	}
	for k := range w.armed {
		if strings.HasPrefix(k.path, e.root+"/so/other") {
			t.Errorf("another spout's znode is watched: %+v", k)
		}
	}
}

// waitArmed waits until the watcher holds a data watch on p.
func waitArmed(t *testing.T, w *Watcher, p string) {
	t.Helper()
	deadline := time.Now().Add(watchWait)
	for {
		w.armedMu.Lock()
		ok := w.armed[watchKey{p, watchData}]
		w.armedMu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no data watch on %s within %s", p, watchWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
