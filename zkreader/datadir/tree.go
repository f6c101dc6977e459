package datadir

import (
	"bytes"
	"fmt"
	"strings"
)

// tree is the part of the ZooKeeper data tree zk2kafka reads: <chroot>/consumers and all
// below it. Every other znode of the snapshot and the logs is decoded and dropped, so memory
// follows the offsets, not the ensemble's whole tree (a Kafka cluster's own metadata, other
// applications' data).
type tree struct {
	chroot string // "" or "/kafka": the znode that must exist for /consumers to be looked up
	root   string // <chroot>/consumers
	// chrootExists follows the chroot znode itself (always true without a chroot): a missing
	// chroot is an error, as for the live reader, since it is almost always a typo.
	chrootExists bool
	consumers    *node // nil while <chroot>/consumers does not exist
	// ephemerals indexes the kept ephemeral znodes by owning session, for closeSession: the
	// server deletes a session's ephemerals when it closes or expires, and the log records
	// only the session's close.
	ephemerals map[int64]map[string]struct{}
	// maxZxid is the highest czxid, mzxid or pzxid of a kept znode (and of the parent of
	// /consumers) as the snapshot stored it: a snapshot is fuzzy, and one that holds changes
	// beyond the last transaction replayed does not show the tree at any one zxid.
	maxZxid int64
	// names interns child names: a name cut from its path would keep the whole path alive
	// (64 bytes for a 2-byte partition number), and the same few partition numbers and topic
	// names recur in every group.
	names map[string]string
}

// node is one kept znode. Children are by name; a leaf has none allocated.
type node struct {
	data     string
	mtime    int64 // ms since the epoch, as ZooKeeper stores it
	owner    int64 // ephemeral owner session, 0 for a persistent znode
	children map[string]*node
}

func newTree(chroot string) *tree {
	return &tree{chroot: chroot, root: chroot + "/consumers", chrootExists: chroot == "",
		ephemerals: map[int64]map[string]struct{}{}, names: map[string]string{}}
}

// parentOfRoot is the path whose children change when /consumers is created or deleted.
func (t *tree) parentOfRoot() string {
	if t.chroot == "" {
		return "/"
	}
	return t.chroot
}

// relevance sorts a path: kept (under or at the root), the chroot itself, or neither.
type relevance int

const (
	irrelevant relevance = iota
	isChroot
	isParent // the parent of /consumers: only its pzxid matters
	kept
)

// classify tells how path matters; it does not allocate.
func (t *tree) classify(path []byte) relevance {
	if len(path) >= len(t.root) && string(path[:len(t.root)]) == t.root &&
		(len(path) == len(t.root) || path[len(t.root)] == '/') {
		return kept
	}
	if t.chroot != "" && string(path) == t.chroot {
		return isChroot
	}
	if string(path) == t.parentOfRoot() || (t.chroot == "" && len(path) == 0) {
		return isParent
	}
	return irrelevant
}

// lookup finds the kept znode at path (under or at the root), or nil.
func (t *tree) lookup(path string) *node {
	if t.consumers == nil || !strings.HasPrefix(path, t.root) {
		return nil
	}
	rest := path[len(t.root):]
	n := t.consumers
	if rest == "" {
		return n
	}
	if rest[0] != '/' {
		return nil
	}
	for name := range strings.SplitSeq(rest[1:], "/") {
		if n = n.children[name]; n == nil {
			return nil
		}
	}
	return n
}

// lookupBytes is lookup for a path held in bytes: map lookups by string(b) do not allocate,
// which keeps the snapshot load from making a string of every kept path.
func (t *tree) lookupBytes(path []byte) *node {
	if t.consumers == nil || len(path) < len(t.root) || string(path[:len(t.root)]) != t.root {
		return nil
	}
	rest := path[len(t.root):]
	n := t.consumers
	if len(rest) == 0 {
		return n
	}
	if rest[0] != '/' {
		return nil
	}
	rest = rest[1:]
	for {
		i := bytes.IndexByte(rest, '/')
		name := rest
		if i >= 0 {
			name = rest[:i]
		}
		if n = n.children[string(name)]; n == nil {
			return nil
		}
		if i < 0 {
			return n
		}
		rest = rest[i+1:]
	}
}

// parentOf splits a kept path below the root into its parent znode (nil when absent) and name.
func (t *tree) parentOf(path string) (*node, string) {
	i := strings.LastIndexByte(path, '/')
	return t.lookup(path[:i]), path[i+1:]
}

// create adds a kept znode. As in ZooKeeper's replay of a fuzzy snapshot, a znode that
// already exists is left alone and a missing parent means the create failed (the server never
// logs such a create; replaying over a fuzzy snapshot can meet both).
func (t *tree) create(path string, data string, mtime, owner int64) {
	if path == t.root {
		if t.consumers == nil {
			t.consumers = &node{data: data, mtime: mtime, owner: owner}
		}
		return
	}
	parent, name := t.parentOf(path)
	if parent == nil {
		return
	}
	if _, ok := parent.children[name]; ok {
		return
	}
	if parent.children == nil {
		parent.children = map[string]*node{}
	}
	interned, ok := t.names[name]
	if !ok {
		interned = strings.Clone(name)
		t.names[interned] = interned
	}
	parent.children[interned] = &node{data: data, mtime: mtime, owner: owner}
	if owner != 0 {
		s := t.ephemerals[owner]
		if s == nil {
			s = map[string]struct{}{}
			t.ephemerals[owner] = s
		}
		s[path] = struct{}{}
	}
}

// createFromSnapshot adds a znode read from a snapshot, whose parent must already be there
// (DataTree.serialize writes the tree in pre-order). Only an ephemeral's path is kept as a
// string: the index of closeSession needs it.
func (t *tree) createFromSnapshot(path []byte, data string, mtime, owner int64) error {
	if len(path) == len(t.root) {
		t.create(t.root, data, mtime, owner)
		return nil
	}
	i := bytes.LastIndexByte(path, '/')
	parent := t.lookupBytes(path[:i])
	if parent == nil {
		return fmt.Errorf("znode %s comes before its parent", path)
	}
	if owner != 0 {
		t.create(string(path), data, mtime, owner)
		return nil
	}
	name := path[i+1:]
	if _, ok := parent.children[string(name)]; ok {
		return nil
	}
	if parent.children == nil {
		parent.children = map[string]*node{}
	}
	interned, ok := t.names[string(name)]
	if !ok {
		interned = string(name)
		t.names[interned] = interned
	}
	parent.children[interned] = &node{data: data, mtime: mtime}
	return nil
}

// delete removes a kept znode and everything below it (the server deletes only leaves; a
// replay over a fuzzy snapshot can meet a subtree the snapshot caught half way).
func (t *tree) delete(path string) {
	if path == t.root {
		t.consumers = nil
		return
	}
	if parent, name := t.parentOf(path); parent != nil {
		if n := parent.children[name]; n != nil && n.owner != 0 {
			delete(t.ephemerals[n.owner], path)
		}
		delete(parent.children, name)
	}
}

// setData replaces a kept znode's data; a missing znode is left missing.
func (t *tree) setData(path string, data []byte, mtime int64) {
	if n := t.lookup(path); n != nil {
		n.data, n.mtime = string(data), mtime
	}
}

// closeSession deletes the kept ephemerals of a session that closed or expired.
func (t *tree) closeSession(session int64) {
	for p := range t.ephemerals[session] {
		// The index can hold a path deleted with its parent since: only the session's own
		// znode goes.
		if n := t.lookup(p); n != nil && n.owner == session {
			t.delete(p)
		}
	}
	delete(t.ephemerals, session)
}
