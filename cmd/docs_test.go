package cmd

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/refdocs"
)

// TestReferenceDocsCurrent: the committed command reference (docs/reference, docs/man) is what
// the command tree generates now. On failure: go run -tags zk2kafkadev ./scripts/gendocs
func TestReferenceDocsCurrent(t *testing.T) {
	fresh := t.TempDir()
	if err := refdocs.Generate(DocTree(), fresh); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{refdocs.MarkdownDir, refdocs.ManDir} {
		want, committed := readDir(t, filepath.Join(fresh, sub)), readDir(t, filepath.Join("..", "docs", sub))
		if !slices.Equal(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(committed))) {
			t.Errorf("docs/%s holds %v, the command tree gives %v: run go run -tags zk2kafkadev ./scripts/gendocs",
				sub, slices.Sorted(maps.Keys(committed)), slices.Sorted(maps.Keys(want)))
			continue
		}
		for name, b := range want {
			if !bytes.Equal(b, committed[name]) {
				t.Errorf("docs/%s/%s is stale: run go run -tags zk2kafkadev ./scripts/gendocs", sub, name)
			}
		}
	}
}

// readDir is the files of dir by name; a missing dir is empty, so the test says what is missing.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}
