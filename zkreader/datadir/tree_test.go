package datadir

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// refNode is a znode of the reference tree: every znode, by path, as ZooKeeper holds it.
type refNode struct {
	data         string
	mtime, owner int64
}

// refTree is the plain model the compact tree must agree with: all znodes under the root,
// creates that need their parent, deletes that take the subtree, closeSession that takes the
// session's ephemerals.
type refTree struct {
	root  string
	nodes map[string]refNode
}

func (r *refTree) create(path, data string, mtime, owner int64) {
	if _, ok := r.nodes[path]; ok {
		return
	}
	if path != r.root {
		if _, ok := r.nodes[path[:strings.LastIndexByte(path, '/')]]; !ok {
			return
		}
	}
	r.nodes[path] = refNode{data, mtime, owner}
}

func (r *refTree) delete(path string) {
	for p := range r.nodes {
		if p == path || strings.HasPrefix(p, path+"/") {
			delete(r.nodes, p)
		}
	}
}

func (r *refTree) setData(path, data string, mtime int64) {
	if n, ok := r.nodes[path]; ok {
		n.data, n.mtime = data, mtime
		r.nodes[path] = n
	}
}

func (r *refTree) closeSession(s int64) {
	for p, n := range r.nodes {
		if n.owner == s {
			r.delete(p)
		}
	}
}

// groups reads the reference as the live reader does.
func (r *refTree) groups() map[string]migrate.LegacyGroup {
	out := map[string]migrate.LegacyGroup{}
	prefix := r.root + "/"
	for p := range r.nodes {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		names := strings.Split(rest, "/")
		g := out[names[0]]
		g.Group = names[0]
		switch {
		case len(names) == 4 && names[1] == "offsets":
			n := r.nodes[p]
			g.Offsets = append(g.Offsets, offsetOf(names[2], p, names[3], &leafData{data: n.data, mtime: n.mtime}))
		case len(names) == 3 && names[1] == "ids":
			g.LiveConsumers = append(g.LiveConsumers, "ids/"+names[2])
		case len(names) == 4 && names[1] == "owners":
			g.LiveConsumers = append(g.LiveConsumers, "owners/"+names[2]+"/"+names[3]+"="+strings.TrimSpace(r.nodes[p].data))
		}
		out[names[0]] = g
	}
	for k, g := range out {
		sortOffsets(g.Offsets)
		slices.Sort(g.LiveConsumers)
		out[k] = g
	}
	return out
}

// TestTreeModel replays random transactions on the compact tree and on the plain model, and
// requires the same groups, offsets and registrations after each: compact offsets that move
// to nodes and back, bases that widen, ephemerals, znodes the store never reads.
func TestTreeModel(t *testing.T) {
	const root = "/legacy/consumers"
	folders := []string{"offsets", "ids", "owners", "other"}
	names := []string{"0", "1", "2", "07", "x", "1-2", "2147483648"}
	datas := []string{"5", "0", "-1", " 7", "abc", "007", "", "4294967296000", "9223372036854775807", "12"}
	mtimes := []int64{0, 1_700_000_000_000, 1_700_000_000_005, -5, math.MaxInt64, math.MinInt64, 1 << 40}
	groups := 3
	randPath := func(rng *rand.Rand) string {
		p := root
		depths := []int{0, 1, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 6}
		depth := depths[rng.IntN(len(depths))]
		if depth == 0 && rng.IntN(3) > 0 {
			depth = 4 // the root goes rarely, or there is little to compare
		}
		for d := range depth {
			switch d {
			case 0:
				p += "/g" + strconv.Itoa(rng.IntN(groups))
			case 1:
				p += "/" + folders[rng.IntN(len(folders))]
			case 2:
				p += "/t" + string(rune('0'+rng.IntN(2)))
			default:
				p += "/" + names[rng.IntN(len(names))]
			}
		}
		return p
	}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		groups = 3
		if seed%3 == 0 {
			groups = 2 * smallKids // past the sorted slice: /consumers holds a map
		}
		tr := newTree("/legacy")
		tr.chrootExists = true
		ref := &refTree{root: root, nodes: map[string]refNode{}}
		for step := range 1200 {
			path := randPath(rng)
			// Creates of the upper levels come often, so that deep paths have parents.
			switch op := rng.IntN(10); {
			case op < 5:
				data := datas[rng.IntN(len(datas))]
				mtime := mtimes[rng.IntN(len(mtimes))]
				var owner int64
				if rng.IntN(4) == 0 {
					owner = 1 + rng.Int64N(2)
				}
				if rng.IntN(2) == 0 {
					// The ancestors first, as a client's createAll does.
					for i := len(root) + 1; i < len(path); i++ {
						if path[i] == '/' {
							tr.create([]byte(path[:i]), nil, 0, 0)
							ref.create(path[:i], "", 0, 0)
						}
					}
					tr.create([]byte(root), nil, 0, 0)
					ref.create(root, "", 0, 0)
				}
				tr.create([]byte(path), []byte(data), mtime, owner)
				ref.create(path, data, mtime, owner)
			case op < 7:
				data := datas[rng.IntN(len(datas))]
				mtime := mtimes[rng.IntN(len(mtimes))]
				tr.setData([]byte(path), []byte(data), mtime)
				ref.setData(path, data, mtime)
			case op < 9:
				tr.delete([]byte(path))
				ref.delete(path)
			default:
				s := 1 + rng.Int64N(2)
				tr.closeSession(s)
				ref.closeSession(s)
			}
			if step%50 == 0 {
				tr.trim()
			}
			if step%20 == 0 || step == 1199 {
				compareTrees(t, seed, step, tr, ref)
			}
		}
	}
}

func compareTrees(t *testing.T, seed uint64, step int, tr *tree, ref *refTree) {
	t.Helper()
	s := &Store{t: tr}
	ctx := context.Background()
	got := map[string]migrate.LegacyGroup{}
	if tr.consumers != nil {
		groups, err := s.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ReadGroups(ctx, groups, func(g migrate.LegacyGroup) error { got[g.Group] = g; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	want := ref.groups()
	if _, ok := ref.nodes[ref.root]; ok != (tr.consumers != nil) {
		t.Fatalf("seed %d step %d: root exists %v, want %v", seed, step, tr.consumers != nil, ok)
	}
	norm := func(m map[string]migrate.LegacyGroup) map[string]migrate.LegacyGroup {
		for k, g := range m {
			if len(g.Offsets) == 0 {
				g.Offsets = nil
			}
			if len(g.LiveConsumers) == 0 {
				g.LiveConsumers = nil
			}
			m[k] = g
		}
		return m
	}
	if got, want := norm(got), norm(want); !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d step %d:\n got %+v\nwant %+v", seed, step, got, want)
	}
	// The re-check reads each offset znode by its path, as the plan saw it.
	for _, g := range want {
		var reqs []migrate.RecheckRequest
		req := migrate.RecheckRequest{Group: g.Group}
		for _, o := range g.Offsets {
			req.Offsets = append(req.Offsets, o)
		}
		reqs = append(reqs, req)
		if err := zkreader.ValidateName(g.Group); err != nil {
			continue
		}
		out, err := s.RecheckGroups(context.Background(), reqs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out[0].Offsets) == 0 {
			out[0].Offsets = nil
		}
		if !reflect.DeepEqual(out[0].Offsets, g.Offsets) {
			t.Fatalf("seed %d step %d: recheck of %s:\n got %+v\nwant %+v", seed, step, g.Group, out[0].Offsets, g.Offsets)
		}
	}
}

// TestPartSetWiden: values beyond the narrow range of a topic's bases widen the whole run and
// read back exactly.
func TestPartSetWiden(t *testing.T) {
	s := &partSet{}
	want := map[int32][2]int64{}
	vals := []int64{0, 1, -1, 1 << 31, 1<<32 + 7, math.MaxInt64, math.MinInt64, time.Now().UnixMilli()}
	for i, v := range vals {
		p := int32(len(vals) - i)
		s.insert(p, v, v/2)
		want[p] = [2]int64{v, v / 2}
		for q, w := range want {
			i, ok := s.find(q)
			if !ok {
				t.Fatalf("partition %d lost", q)
			}
			if o, m := s.get(i); o != w[0] || m != w[1] {
				t.Fatalf("partition %d: %d, %d; want %d, %d", q, o, m, w[0], w[1])
			}
		}
	}
	if s.stride != wideStride {
		t.Errorf("stride %d after values 2^63 apart", s.stride)
	}
	for i := 1; i < s.len(); i++ {
		if s.part(i-1) >= s.part(i) {
			t.Fatalf("not sorted: %d then %d", s.part(i-1), s.part(i))
		}
	}
}
