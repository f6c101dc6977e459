package datadir

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/zk2kafka/zk2kafka/zkreader"
)

// tree is the part of the ZooKeeper data tree zk2kafka reads: <chroot>/consumers and what a
// plan reads below it. Every other znode of the snapshot and the logs is decoded and dropped,
// so memory follows the offsets, not the ensemble's whole tree (a Kafka cluster's own
// metadata, other applications' data).
//
// Below the root only the znodes the store reads are kept (observable): the groups, their
// offsets, ids and owners folders, the topics and ids in those, and the partitions under
// offsets/<topic> and owners/<topic>. A znode anywhere else (a group's other folders, a
// child of an offset or an id) is never read, and dropping it changes none of these: a
// transaction on a path depends only on that path and its parent, and every ancestor of an
// observable znode is observable.
//
// The offset znodes, nearly all of the tree, are kept in a compact form: per topic, a sorted
// run of (partition, offset, mtime) in 12 bytes each (partSet). Only an offset znode whose
// name or data would not read back the same from those numbers (an invalid znode, whose
// reason quotes its data; whitespace around the number; an ephemeral) is kept as a node with
// its data. Names are interned, and no path is kept as a string except an ephemeral's, for
// closeSession.
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
	// maxZxid is the highest czxid, mzxid or pzxid of a znode under the root (and of the
	// parent of /consumers) as the snapshot stored it: a snapshot is fuzzy, and one that holds
	// changes beyond the last transaction replayed does not show the tree at any one zxid.
	maxZxid int64
	// names interns the names that recur from group to group (folder names, topics,
	// partitions): a name cut from its path would keep the whole path alive.
	names map[string]string
}

// node is one kept znode other than a compact offset.
type node struct {
	name  string
	owner int64 // ephemeral owner session, 0 for a persistent znode
	// kids are the children sorted by name while there are few; many holds them (and kids is
	// nil) once there are more than smallKids: /consumers itself has one per group.
	kids []*node
	many map[string]*node
	// leaf is the data of a partition znode (offsets/<topic>/<p>, owners/<topic>/<p>) that is
	// not in a partSet.
	leaf *leafData
	// parts are the compact offset znodes of a topic under offsets/.
	parts *partSet
}

type leafData struct {
	data  string
	mtime int64 // ms since the epoch, as ZooKeeper stores it
}

const smallKids = 32

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

// maxDepth is the depth of the deepest observable znode below the root:
// <group>/offsets/<topic>/<partition>.
const maxDepth = 4

// where is a path below the root cut into its names: comps[:depth] (only the first maxDepth
// are cut). observable says whether the store ever reads the znode.
type where struct {
	comps      [maxDepth][]byte
	depth      int
	observable bool
}

// locate cuts a path at or under the root; ok is false for a path outside it (or a malformed
// one: an empty name).
func (t *tree) locate(path []byte) (w where, ok bool) {
	if len(path) < len(t.root) || string(path[:len(t.root)]) != t.root {
		return w, false
	}
	rest := path[len(t.root):]
	if len(rest) == 0 {
		w.observable = true
		return w, true
	}
	if rest[0] != '/' {
		return w, false
	}
	rest = rest[1:]
	for {
		i := bytes.IndexByte(rest, '/')
		name := rest
		if i >= 0 {
			name = rest[:i]
		}
		if len(name) == 0 {
			return w, false
		}
		if w.depth < maxDepth {
			w.comps[w.depth] = name
		}
		w.depth++
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	w.observable = w.observableAt(w.depth)
	return w, true
}

// observableAt reports whether the ancestor at depth d (d <= depth) is read by the store.
func (w *where) observableAt(d int) bool {
	switch {
	case d <= 1:
		return true
	case d > maxDepth:
		return false
	}
	switch string(w.comps[1]) {
	case "offsets", "owners":
		return true
	case "ids":
		return d <= 3
	}
	return false
}

// nearestObservable is the depth of the deepest observable ancestor of an unobservable znode.
func (w *where) nearestObservable() int {
	d := min(w.depth-1, maxDepth)
	for !w.observableAt(d) {
		d--
	}
	return d
}

// inOffsets reports an offset znode: <group>/offsets/<topic>/<partition>.
func (w *where) inOffsets() bool { return w.depth == maxDepth && string(w.comps[1]) == "offsets" }

// walk finds the generic node at comps[:depth], or nil.
func (t *tree) walk(comps [][]byte) *node {
	n := t.consumers
	for _, c := range comps {
		if n == nil {
			return nil
		}
		n = n.child(c)
	}
	return n
}

// intern returns the kept copy of a name that recurs across groups.
func (t *tree) intern(name []byte) string {
	if s, ok := t.names[string(name)]; ok {
		return s
	}
	s := string(name)
	t.names[s] = s
	return s
}

// compactOffset reports whether an offset znode named name holding data reads back the same
// from (partition, offset) alone: a canonical partition number, and data that is exactly the
// decimal the live reader parses, without a note.
func compactOffset(name, data []byte) (part int32, off int64, ok bool) {
	p, err := zkreader.ParsePartition(string(name))
	if err != nil {
		return 0, 0, false
	}
	v, note, err := zkreader.ParseOffsetNote(data)
	if err != nil || note != "" {
		return 0, 0, false
	}
	var buf [24]byte
	if string(strconv.AppendInt(buf[:0], v, 10)) != string(data) {
		return 0, 0, false
	}
	return p, v, true
}

// create adds a kept znode. As in ZooKeeper's replay of a fuzzy snapshot, a znode that
// already exists is left alone and a missing parent means the create failed (the server never
// logs such a create; replaying over a fuzzy snapshot can meet both). noParent reports the
// latter; for a znode the store never reads, it reports whether its nearest observable
// ancestor is missing.
func (t *tree) create(path, data []byte, mtime, owner int64) (noParent bool) {
	w, ok := t.locate(path)
	if !ok {
		return false
	}
	if w.depth == 0 {
		if t.consumers == nil {
			t.consumers = &node{owner: owner}
			t.indexEphemeral(path, owner)
		}
		return false
	}
	if !w.observable {
		d := w.nearestObservable()
		return t.walk(w.comps[:d]) == nil
	}
	parent := t.walk(w.comps[:w.depth-1])
	if parent == nil {
		return true
	}
	name := w.comps[w.depth-1]
	if parent.child(name) != nil {
		return false
	}
	if w.inOffsets() {
		if parent.parts != nil {
			if p, err := zkreader.ParsePartition(string(name)); err == nil {
				if _, found := parent.parts.find(p); found {
					return false
				}
			}
		}
		if owner == 0 {
			if p, v, ok := compactOffset(name, data); ok {
				if parent.parts == nil {
					parent.parts = &partSet{}
				}
				parent.parts.insert(p, v, mtime)
				return false
			}
		}
	}
	n := &node{owner: owner}
	if w.depth == 1 || (w.depth == 3 && string(w.comps[1]) == "ids") {
		n.name = string(name) // group names and consumer ids do not recur
	} else {
		n.name = t.intern(name)
	}
	if w.depth == maxDepth {
		n.leaf = &leafData{data: string(data), mtime: mtime}
	}
	parent.add(n)
	t.indexEphemeral(path, owner)
	return false
}

func (t *tree) indexEphemeral(path []byte, owner int64) {
	if owner == 0 {
		return
	}
	s := t.ephemerals[owner]
	if s == nil {
		s = map[string]struct{}{}
		t.ephemerals[owner] = s
	}
	s[string(path)] = struct{}{}
}

// createFromSnapshot adds a znode read from a snapshot, whose parent must already be there
// (DataTree.serialize writes the tree in pre-order).
func (t *tree) createFromSnapshot(path, data []byte, mtime, owner int64) error {
	if t.create(path, data, mtime, owner) {
		return fmt.Errorf("znode %s comes before its parent", path)
	}
	return nil
}

// delete removes a kept znode and everything below it (the server deletes only leaves; a
// replay over a fuzzy snapshot can meet a subtree the snapshot caught half way).
func (t *tree) delete(path []byte) {
	w, ok := t.locate(path)
	if !ok || !w.observable {
		return
	}
	if w.depth == 0 {
		t.consumers = nil
		return
	}
	parent := t.walk(w.comps[:w.depth-1])
	if parent == nil {
		return
	}
	name := w.comps[w.depth-1]
	if n := parent.remove(name); n != nil {
		if n.owner != 0 {
			delete(t.ephemerals[n.owner], string(path))
		}
		return
	}
	if w.inOffsets() && parent.parts != nil {
		if p, err := zkreader.ParsePartition(string(name)); err == nil {
			if i, found := parent.parts.find(p); found {
				parent.parts.remove(i)
			}
		}
	}
}

// setData replaces a kept znode's data; a missing znode is left missing. Only a partition
// znode's data and mtime are ever read.
func (t *tree) setData(path, data []byte, mtime int64) {
	w, ok := t.locate(path)
	if !ok || !w.observable || w.depth != maxDepth {
		return
	}
	parent := t.walk(w.comps[:w.depth-1])
	if parent == nil {
		return
	}
	name := w.comps[w.depth-1]
	if n := parent.child(name); n != nil {
		n.leaf.data, n.leaf.mtime = string(data), mtime
		return
	}
	if parent.parts == nil {
		return
	}
	p, err := zkreader.ParsePartition(string(name))
	if err != nil {
		return
	}
	i, found := parent.parts.find(p)
	if !found {
		return
	}
	if _, v, ok := compactOffset(name, data); ok {
		parent.parts.set(i, v, mtime)
		return
	}
	// Data that does not read back from a number: the znode becomes a node with its data.
	parent.parts.remove(i)
	parent.add(&node{name: t.intern(name), leaf: &leafData{data: string(data), mtime: mtime}})
}

// closeSession deletes the kept ephemerals of a session that closed or expired.
func (t *tree) closeSession(session int64) {
	for p := range t.ephemerals[session] {
		// The index can hold a path deleted with its parent since: only the session's own
		// znode goes.
		if n := t.lookup(p); n != nil && n.owner == session {
			t.delete([]byte(p))
		}
	}
	delete(t.ephemerals, session)
}

// lookup finds the generic node at path (at or under the root), or nil.
func (t *tree) lookup(path string) *node {
	w, ok := t.locate([]byte(path))
	if !ok || !w.observable {
		return nil
	}
	return t.walk(w.comps[:w.depth])
}

// trim gives back the spare capacity the partSets grew while loading.
func (t *tree) trim() {
	var walk func(n *node)
	walk = func(n *node) {
		if n.parts != nil {
			n.parts.trim()
		}
		if n.many != nil {
			for _, c := range n.many {
				walk(c)
			}
			return
		}
		for _, c := range n.kids {
			walk(c)
		}
	}
	if t.consumers != nil {
		walk(t.consumers)
	}
}
