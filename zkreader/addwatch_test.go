package zkreader

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestRecursiveTarget: the events of the persistent recursive watch map to the reports the
// one-shot watches give for the same change (watch_set.go's arm), and to nothing where no
// one-shot watch would have fired.
func TestRecursiveTarget(t *testing.T) {
	const (
		created = zk.EventNodeCreated
		set     = zk.EventNodeDataChanged
		deleted = zk.EventNodeDeleted
	)
	run := &watchRun{w: &Watcher{r: &Reader{chroot: "/kafka"}}, groups: map[string]bool{"g": true}}
	for _, c := range []struct {
		path  string
		typ   zk.EventType
		list  bool
		group string
	}{
		{"/kafka/consumers", created, true, ""},
		{"/kafka/consumers", deleted, true, ""},
		{"/kafka/consumers", set, false, ""},
		{"/kafka/consumers/g", created, true, ""},
		{"/kafka/consumers/other", created, true, ""},
		{"/kafka/consumers/other", deleted, true, ""},
		{"/kafka/consumers/g", set, false, ""},
		{"/kafka/consumers/other/offsets/t/0", set, false, ""}, // not selected
		{"/kafka/consumers/g/offsets", created, false, "g"},
		{"/kafka/consumers/g/offsets", deleted, false, "g"},
		{"/kafka/consumers/g/offsets", set, false, ""},
		{"/kafka/consumers/g/offsets/t", created, false, "g"},
		{"/kafka/consumers/g/offsets/t", set, false, ""},
		{"/kafka/consumers/g/offsets/t/0", created, false, "g"},
		{"/kafka/consumers/g/offsets/t/0", set, false, "g"},
		{"/kafka/consumers/g/offsets/t/0", deleted, false, "g"},
		{"/kafka/consumers/g/offsets/t/0/x", created, false, ""},
		{"/kafka/consumers/g/ids", created, false, "g"},
		{"/kafka/consumers/g/ids/c1", created, false, "g"},
		{"/kafka/consumers/g/ids/c1", deleted, false, "g"},
		{"/kafka/consumers/g/ids/c1", set, false, ""},
		{"/kafka/consumers/g/ids/c1/x", created, false, ""},
		{"/kafka/consumers/g/owners", deleted, false, "g"},
		{"/kafka/consumers/g/owners/t", created, false, "g"},
		{"/kafka/consumers/g/owners/t/0", created, false, "g"},
		{"/kafka/consumers/g/owners/t/0", deleted, false, "g"},
		{"/kafka/consumers/g/owners/t/0", set, false, ""},
		{"/kafka/consumers/g/zk2kafka-migrated", created, false, ""},
		{"/kafka/consumersx/g/offsets/t/0", set, false, ""},
		{"/consumers/g/offsets/t/0", set, false, ""}, // outside the chroot
	} {
		list, group := run.recursiveTarget(zk.Event{Type: c.typ, Path: c.path})
		if list != c.list || group != c.group {
			t.Errorf("%s %s: list %v, group %q; want %v, %q", c.typ, c.path, list, group, c.list, c.group)
		}
	}
}

// TestStormTarget: the recursive watch on a spout's folder maps to what the one-shot watches
// of the spout (stormArm) report: its folder coming and going (the list too), its wildcard topic
// folders coming and going, its partition znodes created, set or deleted.
func TestStormTarget(t *testing.T) {
	const (
		created = zk.EventNodeCreated
		set     = zk.EventNodeDataChanged
		deleted = zk.EventNodeDeleted
	)
	for _, root := range []string{"/spouts", "/"} {
		run := &watchRun{w: &Watcher{r: &Reader{chroot: "/kafka"}, storm: &StormLayout{Root: root, SpoutID: "s1", Group: "g"}},
			groups: map[string]bool{"g": true}}
		d := strings.TrimSuffix("/kafka"+root, "/") + "/s1"
		if got := run.w.recursivePath(); got != d {
			t.Errorf("root %s: recursive watch on %s, want the spout's folder %s", root, got, d)
		}
		if got, want := run.w.listPath(), strings.TrimSuffix("/kafka"+root, "/"); got != want {
			t.Errorf("root %s: groups listed from %s, want %s", root, got, want)
		}
		for _, c := range []struct {
			path  string
			typ   zk.EventType
			list  bool
			group string
		}{
			{d, created, true, "g"},
			{d, deleted, true, "g"},
			{d, set, false, ""},
			{d + "/partition_0", created, false, "g"},
			{d + "/partition_0", set, false, "g"},
			{d + "/partition_0", deleted, false, "g"},
			{d + "/topic-a", created, false, "g"}, // a wildcard topic folder
			{d + "/topic-a", set, false, ""},
			{d + "/topic-a/partition_3", set, false, "g"},
			{d + "/topic-a/partition_3", deleted, false, "g"},
			{d + "/topic-a/notes", created, false, ""},
			{d + "/topic-a/x/partition_3", set, false, ""}, // deeper than a spout writes
			{d + "0/partition_0", set, false, ""},          // another spout's folder
		} {
			list, group := run.recursiveTarget(zk.Event{Type: c.typ, Path: c.path})
			if list != c.list || group != c.group {
				t.Errorf("root %s: %s %s: list %v, group %q; want %v, %q", root, c.typ, c.path, list, group, c.list, c.group)
			}
		}
	}
}

// TestAppendAddWatch: AddWatchRequest{path ustring, mode int} as zookeeper.jute has it, with
// mode persistentRecursive.
func TestAppendAddWatch(t *testing.T) {
	got := appendAddWatch(nil, "/c")
	want := []byte{0, 0, 0, 2, '/', 'c', 0, 0, 0, 1}
	if !bytes.Equal(got, want) {
		t.Fatalf("appendAddWatch = %v, want %v", got, want)
	}
}

// TestWatchLost: the persistent watch is added again after every reconnect, once, and not at
// the first session.
func TestWatchLost(t *testing.T) {
	for _, c := range []struct {
		name   string
		states []zk.State
		readd  bool
	}{
		{"first session", []zk.State{zk.StateConnecting, zk.StateConnected, zk.StateHasSession}, false},
		{"disconnected, not back yet", []zk.State{zk.StateHasSession, zk.StateDisconnected, zk.StateConnecting}, false},
		{"reconnected", []zk.State{zk.StateDisconnected, zk.StateConnecting, zk.StateConnected, zk.StateHasSession}, true},
		{"two disconnects, one reconnect", []zk.State{zk.StateDisconnected, zk.StateDisconnected, zk.StateHasSession}, true},
	} {
		var l watchLost
		for _, s := range c.states {
			l.session(zk.Event{Type: zk.EventSession, State: s})
		}
		if l.readd != c.readd {
			t.Errorf("%s: readd %v, want %v", c.name, l.readd, c.readd)
		}
	}
}
