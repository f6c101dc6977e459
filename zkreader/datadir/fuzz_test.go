package datadir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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

// FuzzSnapshot feeds arbitrary bytes to the snapshot parser as a plain, gzip or snappy
// snapshot: it must never panic nor allocate without bound, and every failure must be a
// FormatError naming the file and an offset. The seeds are the fixtures' snapshots.
func FuzzSnapshot(f *testing.F) {
	for _, fx := range fixtures {
		fs, err := locate(filepath.Join("testdata", fx))
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range fs.snaps[:2] {
			b, err := os.ReadFile(s.path)
			if err != nil {
				f.Fatal(err)
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
		path := "snapshot.1" + snapSuffixes[int(mode)%len(snapSuffixes)]
		tr := newTree("/legacy")
		j, err := snapshotReader(path, bytes.NewReader(data))
		if err == nil {
			_, err = parseSnapshot(j, tr)
		}
		checkFormatError(t, err, path, int64(len(data)), int(mode)%len(snapSuffixes) != 0)
	})
}

// FuzzTxnLog feeds arbitrary bytes to the log reader and replays what it accepts: no panic,
// and every failure a FormatError naming the file and an offset inside it.
func FuzzTxnLog(f *testing.F) {
	for _, fx := range []string{"3.4.14", "3.9.3"} {
		fs, err := locate(filepath.Join("testdata", fx))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range fs.logs[len(fs.logs)-2:] {
			b, err := os.ReadFile(l.path)
			if err != nil {
				f.Fatal(err)
			}
			// The head of a log: the file header and some records. Go's fuzzer slows to a
			// crawl on inputs of tens of KiB; a few records cover every field.
			f.Add(b[:min(len(b), 2048)])
			f.Add(b[len(b)-min(len(b), 600):]) // a record cut anywhere, no header
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := "log.1"
		tr := newTree("/legacy")
		tr.chrootExists = true
		tr.consumers = &node{}
		_, _, err := readLogFrom(path, bytes.NewReader(data), func(h txnHeader, body []byte, off int64) (bool, error) {
			return false, applyTxn(tr, h, body, path, off)
		})
		checkFormatError(t, err, path, int64(len(data)), false)
	})
}
