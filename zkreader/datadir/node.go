package datadir

import (
	"slices"
	"sort"
)

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
