package cmd

import (
	"encoding/json"
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestResolveBuild(t *testing.T) {
	vcs := func(version string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/zk2kafka/zk2kafka", Version: version}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	checkout := []string{"vcs", "git", "vcs.revision", "0123456789abcdef0123456789abcdef01234567",
		"vcs.time", "2026-12-05T01:05:03Z", "vcs.modified", "true"}
	cases := []struct {
		name string
		ld   build
		bi   *debug.BuildInfo
		want build
	}{
		{"go install @tag: the module version, nothing else known", build{}, vcs("v0.3.0"),
			build{Version: "v0.3.0", Commit: "unknown", CommitTime: "unknown", GoVersion: "go1.99.1"}},
		{"go install @commit: the pseudo-version names the commit and its time", build{}, vcs("v0.3.1-0.20261205010503-20202bb0f1e2"),
			build{Version: "v0.3.1-0.20261205010503-20202bb0f1e2", Commit: "20202bb0f1e2", CommitTime: "2026-12-05T01:05:03Z", GoVersion: "go1.99.1"}},
		{"checkout without VCS stamping", build{}, vcs("(devel)"),
			build{Version: "(devel)", Commit: "unknown", CommitTime: "unknown", GoVersion: "go1.99.1"}},
		{"checkout with VCS stamping and local changes", build{}, vcs("(devel)", checkout...),
			build{Version: "(devel)", Commit: "0123456789abcdef0123456789abcdef01234567", CommitTime: "2026-12-05T01:05:03Z", Modified: true, GoVersion: "go1.99.1"}},
		{"ldflags win over build information", build{Version: "v1.2.3", Commit: "abc", CommitTime: "2026-01-02T03:04:05Z"}, vcs("(devel)", checkout...),
			build{Version: "v1.2.3", Commit: "abc", CommitTime: "2026-01-02T03:04:05Z", Modified: true, GoVersion: "go1.99.1"}},
		{"ldflags version only: the rest from VCS", build{Version: "v1.2.3"}, vcs("(devel)", checkout...),
			build{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567", CommitTime: "2026-12-05T01:05:03Z", Modified: true, GoVersion: "go1.99.1"}},
		{"no build information at all", build{}, nil,
			build{Version: "(devel)", Commit: "unknown", CommitTime: "unknown", GoVersion: "go1.0-runtime"}},
		{"empty module version (a test binary)", build{}, vcs(""),
			build{Version: "(devel)", Commit: "unknown", CommitTime: "unknown", GoVersion: "go1.99.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolveBuild(tc.ld, tc.bi, "go1.0-runtime"); got != tc.want {
				t.Errorf("resolveBuild = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	b := build{Version: "v0.3.0", Commit: "20202bb0f1e2", CommitTime: "2026-12-05T01:05:03Z", Modified: true, GoVersion: "go1.99.1"}
	text := "zk2kafka v0.3.0\n  commit:      20202bb0f1e2\n  commit time: 2026-12-05T01:05:03Z\n  modified:    true\n  go:          go1.99.1\n"
	inject := func(d *deps) { d.build = b }
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}, {"version", "-o", "text"}} {
		out, errOut, code := runWith(t, fixture(), inject, args...)
		if code != ExitOK || out != text {
			t.Errorf("zk2kafka %s: exit %d, stdout\n%s\nstderr %s\nwant\n%s", strings.Join(args, " "), code, out, errOut, text)
		}
	}

	out, errOut, code := runWith(t, fixture(), inject, "version", "-o", "json")
	var got build
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitOK || got != b {
		t.Errorf("version -o json: exit %d, %+v (%v), stderr %s; want %+v", code, got, err, errOut, b)
	}
	for _, key := range []string{`"version"`, `"commit"`, `"commit_time"`, `"modified"`, `"go_version"`} {
		if !strings.Contains(out, key) {
			t.Errorf("version -o json lacks %s:\n%s", key, out)
		}
	}

	// A version that looks like template syntax is printed as it is.
	odd := func(d *deps) { d.build = build{Version: "{{.Name}}"} }
	if out, _, _ := runWith(t, fixture(), odd, "--version"); !strings.HasPrefix(out, "zk2kafka {{.Name}}\n") {
		t.Errorf("--version with a version of {{.Name}}: %q", out)
	}

	if _, errOut, code := runWith(t, fixture(), inject, "version", "-o", "yaml"); code != ExitError || !strings.Contains(errOut, `"yaml"`) {
		t.Errorf("version -o yaml: exit %d, stderr %s; want an error naming the format", code, errOut)
	}
}

// TestNoDeveloperCommands: the shipped binary carries no test tooling (the seeder is
// scripts/seed, behind the zk2kafkadev build tag), hidden or not.
func TestNoDeveloperCommands(t *testing.T) {
	root := newRootCmd(defaultDeps(io.Discard, io.Discard), &globalOptions{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "dev" || sub.Name() == "seed" {
				t.Errorf("%s has a %q subcommand: developer tooling belongs in scripts/, behind the zk2kafkadev tag", c.CommandPath(), sub.Name())
			}
			walk(sub)
		}
	}
	walk(root)
}

// TestVersionTextWithoutVCS: a build without its VCS stamp says nothing of the tree: "modified"
// is unknown, not false.
func TestVersionTextWithoutVCS(t *testing.T) {
	for _, tc := range []struct {
		b    build
		want string
	}{
		{build{Version: "(devel)", Commit: unknown, CommitTime: unknown, GoVersion: "go1.26.0"}, "modified:    unknown"},
		{build{Version: "v0.3.0", Commit: "abc", CommitTime: "2026-01-01T00:00:00Z", GoVersion: "go1.26.0"}, "modified:    false"},
		{build{Version: "v0.3.0", Commit: "abc", CommitTime: "2026-01-01T00:00:00Z", Modified: true, GoVersion: "go1.26.0"}, "modified:    true"},
	} {
		if got := tc.b.text(); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q lacks %q", tc.b, got, tc.want)
		}
	}
}
