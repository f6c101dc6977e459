//go:build zk2kafkadev

// Command gendocs writes zk2kafka's command reference from its cobra tree: markdown into
// docs/reference, man pages into docs/man. Run it after changing a command, flag or help text
// (cmd's TestReferenceDocsCurrent fails until the committed copy matches):
//
//	go run -tags zk2kafkadev ./scripts/gendocs [-dir docs]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zk2kafka/zk2kafka/cmd"
	"github.com/zk2kafka/zk2kafka/internal/refdocs"
)

func main() {
	dir := flag.String("dir", "docs", "directory to write reference/ and man/ into")
	flag.Parse()
	// Stale pages of removed commands would linger otherwise.
	for _, sub := range []string{refdocs.MarkdownDir, refdocs.ManDir} {
		if err := os.RemoveAll(filepath.Join(*dir, sub)); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
			os.Exit(1)
		}
	}
	if err := refdocs.Generate(cmd.DocTree(), *dir); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}
