package datadir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// genDir writes a data directory like the seed tool's: groups × topics × partitions offset
// znodes under /consumers in one snapshot, and a log that moves every group's first offset.
func genDir(tb testing.TB, groups, topics, partitions int) (dir string, offsets int) {
	tb.Helper()
	const ms = 1_700_000_000_000
	var nodes []genNode
	z := int64(0)
	add := func(path, data string) {
		z++
		nodes = append(nodes, genNode{path: path, data: data, czxid: z, mzxid: z, mtime: ms + z, pzxid: z})
	}
	add("", "")
	add("/consumers", "")
	for g := range groups {
		gp := fmt.Sprintf("/consumers/seed-group-%04d", g)
		add(gp, "")
		add(gp+"/offsets", "")
		for t := range topics {
			tp := fmt.Sprintf("%s/offsets/seed-topic-%d", gp, (g+t)%(2*topics))
			add(tp, "")
			for p := range partitions {
				add(tp+"/"+strconv.Itoa(p), strconv.Itoa(1000*g+p))
				offsets++
			}
		}
	}
	var txns []genTxn
	snapZxid := z
	for g := range groups {
		z++
		path := fmt.Sprintf("/consumers/seed-group-%04d/offsets/seed-topic-%d/0", g, g%(2*topics))
		txns = append(txns, genTxn{session: 1, zxid: z, time: ms + z, typ: opSetData, body: txnSetData(path, strconv.Itoa(g+7))})
	}
	dir = tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("snapshot.%x", snapZxid)), genSnapshot(nodes, true), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("log.%x", snapZxid+1)), genLog(txns), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir, offsets
}

// BenchmarkLoad opens a generated directory of 100,000 offset znodes (1,000 groups, 2 topics
// each, 50 partitions) and reports the live heap the open store holds per offset znode.
func BenchmarkLoad(b *testing.B) {
	dir, offsets := genDir(b, 1000, 2, 50)
	var s *Store
	for b.Loop() {
		var err error
		if s, err = Open(context.Background(), Config{Path: dir}); err != nil {
			b.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	s = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(context.Background(), Config{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(offsets), "heap-B/znode")
	b.ReportMetric(float64(offsets)*float64(b.N)/b.Elapsed().Seconds(), "znodes/s")
	runtime.KeepAlive(s)
}

// TestGenDir: the benchmark's directory reads back whole.
func TestGenDir(t *testing.T) {
	dir, offsets := genDir(t, 20, 2, 5)
	s, err := Open(context.Background(), Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range readAll(t, s) {
		for _, o := range g.Offsets {
			if o.Invalid != "" {
				t.Errorf("%s: %s", o.Path, o.Invalid)
			}
			n++
		}
	}
	if n != offsets || s.Info().Zxid == s.Info().SnapshotZxid {
		t.Errorf("%d offsets, want %d; zxid %#x (the log not replayed?)", n, offsets, s.Info().Zxid)
	}
}
