// Package refdocs writes the command reference, markdown and man pages, from a cobra command
// tree. It is kept out of the zk2kafka binary (only scripts/gendocs and a test import it), so
// the markdown and roff renderers are not shipped to users.
package refdocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Dirs under the output directory: the markdown reference and the man pages (section 1).
const (
	MarkdownDir = "reference"
	ManDir      = "man"
)

// thDate is the date field of a man page's .TH line. Cobra fills in the current month; the
// pages are left undated instead, so the same tree always gives the same bytes and a committed
// copy is stale only when the commands changed.
var thDate = regexp.MustCompile(`(?m)^(\.TH "[^"]*" "[^"]*") "[^"]*"`)

// Generate writes root's reference into dir/reference (one markdown file per command) and
// dir/man (one man page per command), creating them. The output depends only on the tree:
// no date, no "Auto generated" footer. It sets DisableAutoGenTag on every command of root.
func Generate(root *cobra.Command, dir string) error {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		if !c.IsAvailableCommand() && c != root {
			return // hidden, deprecated and help: not documented, as in --help
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	md, man := filepath.Join(dir, MarkdownDir), filepath.Join(dir, ManDir)
	for _, d := range []string{md, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create reference directory: %w", err)
		}
	}
	for _, c := range all {
		base := strings.ReplaceAll(c.CommandPath(), " ", "_")
		var b bytes.Buffer
		if err := doc.GenMarkdown(c, &b); err != nil {
			return fmt.Errorf("markdown of %q: %w", c.CommandPath(), err)
		}
		if err := os.WriteFile(filepath.Join(md, base+".md"), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write markdown of %q: %w", c.CommandPath(), err)
		}
		b.Reset()
		header := &doc.GenManHeader{Section: "1", Source: "zk2kafka", Manual: "zk2kafka manual"}
		if err := doc.GenMan(c, header, &b); err != nil {
			return fmt.Errorf("man page of %q: %w", c.CommandPath(), err)
		}
		page := thDate.ReplaceAll(b.Bytes(), []byte(`$1 ""`))
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		if err := os.WriteFile(filepath.Join(man, name), page, 0o644); err != nil {
			return fmt.Errorf("write man page of %q: %w", c.CommandPath(), err)
		}
	}
	return nil
}
