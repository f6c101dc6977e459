package datadir

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
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

// child finds a generic child by name; it does not allocate.
func (n *node) child(name []byte) *node {
	if n.many != nil {
		return n.many[string(name)]
	}
	i, ok := n.search(name)
	if !ok {
		return nil
	}
	return n.kids[i]
}

// search finds where name is or would be in kids.
func (n *node) search(name []byte) (int, bool) {
	i := sort.Search(len(n.kids), func(i int) bool { return n.kids[i].name >= string(name) })
	return i, i < len(n.kids) && n.kids[i].name == string(name)
}

// add inserts a child that is not there.
func (n *node) add(c *node) {
	if n.many != nil {
		n.many[c.name] = c
		return
	}
	if len(n.kids) == smallKids {
		n.many = make(map[string]*node, 2*smallKids)
		for _, k := range n.kids {
			n.many[k.name] = k
		}
		n.kids = nil
		n.many[c.name] = c
		return
	}
	i, _ := n.search([]byte(c.name))
	n.kids = slices.Insert(n.kids, i, c)
}

// remove takes out the child named name and returns it, or nil.
func (n *node) remove(name []byte) *node {
	if n.many != nil {
		c := n.many[string(name)]
		delete(n.many, string(name))
		return c
	}
	i, ok := n.search(name)
	if !ok {
		return nil
	}
	c := n.kids[i]
	n.kids = slices.Delete(n.kids, i, i+1)
	return c
}

// children are the generic children sorted by name.
func (n *node) children() []*node {
	if n.many == nil {
		return n.kids
	}
	out := make([]*node, 0, len(n.many))
	for _, c := range n.many {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *node) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out
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

// partSet holds the compact offset znodes of one topic, sorted by partition: stride words each,
// (partition, offset - base[0], mtime - base[1]) while every value lies within 4 Gi of its
// base (12 bytes a znode), else (partition, offset, mtime) with both as two words (20 bytes).
type partSet struct {
	w      []uint32
	base   [2]int64
	stride int
}

const (
	narrowStride = 3
	wideStride   = 5
)

func (s *partSet) len() int {
	if s.stride == 0 {
		return 0
	}
	return len(s.w) / s.stride
}

func (s *partSet) part(i int) int32 { return int32(s.w[i*s.stride]) }

// get returns the offset and mtime of the i-th znode.
func (s *partSet) get(i int) (off, mtime int64) {
	e := s.w[i*s.stride:]
	if s.stride == narrowStride {
		return s.base[0] + int64(e[1]), s.base[1] + int64(e[2])
	}
	return int64(uint64(e[1])<<32 | uint64(e[2])), int64(uint64(e[3])<<32 | uint64(e[4]))
}

// find is the index of partition p, or where it would go.
func (s *partSet) find(p int32) (int, bool) {
	n := s.len()
	i := sort.Search(n, func(i int) bool { return s.part(i) >= p })
	return i, i < n && s.part(i) == p
}

// center is a base that puts v in the middle of the narrow range.
func center(v int64) int64 {
	const half = 1 << 31
	if v < -1<<63+half {
		return -1 << 63
	}
	return v - half
}

// fits reports whether v is within the narrow range of base.
func fits(v, base int64) bool { return v >= base && uint64(v)-uint64(base) <= 1<<32-1 }

// encode writes one znode's words into e.
func (s *partSet) encode(e []uint32, p int32, off, mtime int64) {
	e[0] = uint32(p)
	if s.stride == narrowStride {
		e[1], e[2] = uint32(uint64(off)-uint64(s.base[0])), uint32(uint64(mtime)-uint64(s.base[1]))
		return
	}
	e[1], e[2] = uint32(uint64(off)>>32), uint32(off)
	e[3], e[4] = uint32(uint64(mtime)>>32), uint32(mtime)
}

// room makes (off, mtime) storable: the first znode sets the bases, a value outside them
// widens every znode of the topic.
func (s *partSet) room(off, mtime int64) {
	if s.len() == 0 {
		s.w, s.stride, s.base = s.w[:0], narrowStride, [2]int64{center(off), center(mtime)}
		return
	}
	if s.stride == wideStride || (fits(off, s.base[0]) && fits(mtime, s.base[1])) {
		return
	}
	n := s.len()
	wide := &partSet{w: make([]uint32, n*wideStride, (n+1)*wideStride), stride: wideStride}
	for i := range n {
		o, m := s.get(i)
		wide.encode(wide.w[i*wideStride:], s.part(i), o, m)
	}
	*s = *wide
}

// insert adds partition p, which is not there.
func (s *partSet) insert(p int32, off, mtime int64) {
	s.room(off, mtime)
	i, _ := s.find(p)
	var e [wideStride]uint32
	s.encode(e[:], p, off, mtime)
	s.w = slices.Insert(s.w, i*s.stride, e[:s.stride]...)
}

// set replaces the offset and mtime of the i-th znode.
func (s *partSet) set(i int, off, mtime int64) {
	p := s.part(i)
	s.room(off, mtime)
	s.encode(s.w[i*s.stride:], p, off, mtime)
}

// remove takes out the i-th znode.
func (s *partSet) remove(i int) {
	s.w = slices.Delete(s.w, i*s.stride, (i+1)*s.stride)
}

func (s *partSet) trim() {
	if cap(s.w) > len(s.w) {
		s.w = slices.Clone(s.w)
	}
}
