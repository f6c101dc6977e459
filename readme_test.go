package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadme holds README.md to what it promises its readers: the two set-up commands first (the
// demo, then the tests, which .ci/run calls), a page a user can read (12 KiB or less), and the
// sections in the order a first-time user needs them.
func TestReadme(t *testing.T) {
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(doc); n > 12<<10 {
		t.Errorf("README.md is %d bytes, over 12 KiB: move detail into docs/", n)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("README.md has no sh block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		cmds = append(cmds, strings.Fields(l)[0])
	}
	if strings.Join(cmds, " ") != "scripts/demo scripts/test" {
		t.Errorf("README.md's first block runs %q, want exactly scripts/demo then scripts/test", cmds)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "scripts/test") {
		t.Error(".ci/run does not call scripts/test, the test command README.md names")
	}
	order := []string{"## What it is", "## Install", "## Quick start", "## Migration runbook", "## Legacy layouts", "## Legacy clients", "## Configuration", "## Exit codes"}
	last := -1
	for _, h := range order {
		i := strings.Index(string(doc), "\n"+h)
		switch {
		case i < 0:
			t.Errorf("README.md has no section %q", h)
		case i < last:
			t.Errorf("README.md: %q comes before the section it should follow", h)
		default:
			last = i
		}
	}
}
