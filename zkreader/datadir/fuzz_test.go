package datadir

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkFormatError holds a parser's error to its contract: a *FormatError naming the file,
// at an offset inside what was read (the decompressed stream may be longer than the file).
func checkFormatError(t *testing.T, err error, path string, size int64, compressed bool) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a FormatError", err, err)
	}
	if fe.File != path {
		t.Fatalf("error names %s, want %s: %v", fe.File, path, err)
	}
	if fe.Offset < 0 || (!compressed && fe.Offset > size) {
		t.Fatalf("error offset %d outside the file of %d bytes: %v", fe.Offset, size, err)
	}
}

var snapSuffixes = []string{"", ".gz", ".snappy"}

// The seeds are small synthetic files (fuzzSnapshots, fuzzLogs) and the smallest files of the
// real servers' fixtures. Go's fuzzer minimizes every input that finds new coverage, with a
// pass that is quadratic in the input's length: from the fixtures' 15 KiB snapshots it spent
// most of a run minimizing, at a few executions a second. The targets also read in a mode
// that does not compare checksums (the mode's high bit): a mutation anywhere else fails the
// Adler32 of the seal or of its record, and never reaches the fields behind it.
const maxSeed = 1 << 10

// fuzzSnapshots are small snapshots without a chroot: offsets (compact, and with a note), and
// an ephemeral registration.
func fuzzSnapshots() [][]byte {
	const ms = 1_700_000_000_000
	mk := func(paths ...string) []genNode {
		var nodes []genNode
		for i, p := range paths {
			path, data, _ := strings.Cut(p, "=")
			var owner int64
			if strings.Contains(path, "/ids/") {
				owner = 0x100
			}
			z := int64(i + 1)
			nodes = append(nodes, genNode{path: path, data: data, czxid: z, mzxid: z, mtime: ms + z, owner: owner, pzxid: z})
		}
		return nodes
	}
	offsets := mk("", "/consumers", "/consumers/g", "/consumers/g/offsets", "/consumers/g/offsets/t",
		"/consumers/g/offsets/t/0=42", "/consumers/g/offsets/t/1= 7")
	ids := mk("", "/consumers", "/consumers/g", "/consumers/g/ids", "/consumers/g/ids/c=1")
	return [][]byte{genSnapshot(offsets, false), genSnapshot(ids, true)}
}

// fuzzLogs are small logs over fuzzSnapshots' first tree, one kind of change each.
func fuzzLogs() [][]byte {
	const ms = 1_700_000_001_000
	txn := func(z int64, typ int32, body []byte) genTxn {
		return genTxn{session: 0x200, zxid: z, time: ms + z, typ: typ, body: body}
	}
	return [][]byte{
		genLog([]genTxn{
			txn(8, opCreate, txnCreate("/consumers/g/offsets/t/2", "5", false)),
			txn(9, opSetData, txnSetData("/consumers/g/offsets/t/0", "x")),
			txn(10, opDelete, txnDelete("/consumers/g/offsets/t/1")),
		}),
		genLog([]genTxn{
			txn(8, opMulti, txnMulti(
				genTxn{typ: opCreate, body: txnCreate("/consumers/g/offsets/u", "", false)},
				genTxn{typ: opSetData, body: txnSetData("/consumers/g/offsets/t/0", "9")},
			)),
			txn(9, opError, []byte{0, 0, 0, 0xff}),
		}),
		genLog([]genTxn{
			txn(8, opCreate, txnCreate("/consumers/g/ids", "", false)),
			txn(9, opCreate, txnCreate("/consumers/g/ids/c", "", true)),
			txn(10, opCloseSession, nil),
		}),
	}
}

// FuzzSnapshot feeds arbitrary bytes to the snapshot parser as a plain, gzip or snappy
// snapshot (mode%3), its seals checked or not (mode&0x80): it must never panic nor allocate
// without bound, and every failure must be a FormatError naming the file and an offset.
func FuzzSnapshot(f *testing.F) {
	for _, b := range fuzzSnapshots() {
		for _, mode := range []uint8{0, 0x80} {
			f.Add(mode, b)
		}
		f.Add(uint8(1), gzipped(b))
		f.Add(uint8(2), snappyJava(b))
	}
	for _, fx := range fixtures {
		fs, err := locate(filepath.Join("testdata", fx))
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range fs.snaps {
			b, err := os.ReadFile(s.path)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) > maxSeed {
				continue
			}
			mode := uint8(0)
			for i, suf := range snapSuffixes {
				if suf != "" && filepath.Ext(s.path) == suf {
					mode = uint8(i)
				}
			}
			f.Add(mode, b)
		}
	}
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		path := "snapshot.1" + snapSuffixes[int(mode&0x7f)%len(snapSuffixes)]
		tr := newTree("")
		j, err := snapshotReader(path, bytes.NewReader(data))
		if err == nil {
			j.unchecked = mode&0x80 != 0
			_, err = parseSnapshot(j, tr)
		}
		checkFormatError(t, err, path, int64(len(data)), int(mode&0x7f)%len(snapSuffixes) != 0)
	})
}

// FuzzTxnLog feeds arbitrary bytes to the log reader, records' checksums checked or not, and
// replays what it accepts over fuzzSnapshots' first tree: no panic, and every failure a
// FormatError naming the file and an offset inside it.
func FuzzTxnLog(f *testing.F) {
	for _, b := range fuzzLogs() {
		f.Add(false, b)
		f.Add(true, b)
	}
	for _, fx := range []string{"3.4.14", "3.9.3"} {
		fs, err := locate(filepath.Join("testdata", fx))
		if err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(fs.logs[0].path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(false, b[:min(len(b), 384)]) // the head of a real log: the header and a few records
	}
	base := fuzzSnapshots()[0]
	f.Fuzz(func(t *testing.T, unchecked bool, data []byte) {
		path := "log.1"
		tr := newTree("")
		if _, err := parseSnapshot(newJuteReader("snapshot.1", "", bytes.NewReader(base), true), tr); err != nil {
			t.Fatal(err)
		}
		_, _, err := readLogFrom(path, bytes.NewReader(data), !unchecked, func(h txnHeader, body []byte, off int64) (bool, error) {
			return false, applyTxn(tr, h, body, path, off)
		})
		checkFormatError(t, err, path, int64(len(data)), false)
	})
}

// TestSeeds: the synthetic seeds read as ZooKeeper would have them, so that the fuzzers start
// from files the parsers accept whole.
func TestSeeds(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"snapshot.11": genSnapshot(seedTree(), true),
		"log.12":      seedLog(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(context.Background(), Config{Path: dir, Chroot: fixtureChroot})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Info().Warnings; len(w) != 0 || s.Info().Zxid != 0x1b {
		t.Fatalf("zxid %#x, warnings %q", s.Info().Zxid, w)
	}
	g := readAll(t, s)["g"]
	got := map[string]string{}
	for _, o := range g.Offsets {
		v := strconv.FormatInt(o.Offset, 10)
		if o.Invalid != "" {
			v = "invalid"
		}
		got[strings.TrimPrefix(o.Path, "/legacy/consumers/g/offsets/")] = v
	}
	want := map[string]string{"t/0": "44", "t/07": "invalid", "t/2": "invalid", "t/3": "invalid", "u/0": "1"}
	if !maps.Equal(got, want) || len(g.LiveConsumers) != 0 {
		t.Errorf("offsets %v (want %v), live %q (want none: both sessions closed)", got, want, g.LiveConsumers)
	}
	// The fuzz seeds parse whole, and stay small.
	for i, b := range fuzzSnapshots() {
		for mode, b := range [][]byte{b, gzipped(b), snappyJava(b)} {
			name := "snapshot.1" + snapSuffixes[mode]
			j, err := snapshotReader(name, bytes.NewReader(b))
			if err == nil {
				_, err = parseSnapshot(j, newTree(""))
			}
			if err != nil || len(b) > maxSeed {
				t.Errorf("snapshot seed %d, %s: %d bytes, %v", i, name, len(b), err)
			}
		}
	}
	for i, b := range fuzzLogs() {
		tr := newTree("")
		if _, err := parseSnapshot(newJuteReader("snapshot.1", "", bytes.NewReader(fuzzSnapshots()[0]), true), tr); err != nil {
			t.Fatal(err)
		}
		n := 0
		_, _, err := readLogFrom("log.1", bytes.NewReader(b), true, func(h txnHeader, body []byte, off int64) (bool, error) {
			n++
			return false, applyTxn(tr, h, body, "log.1", off)
		})
		if err != nil || n == 0 || len(b) > maxSeed {
			t.Errorf("log seed %d: %d bytes, %d transactions, %v", i, len(b), n, err)
		}
	}
}
