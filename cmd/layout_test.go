package cmd

import (
	"strings"
	"testing"
)

// TestLayoutFlags: the layout flags are checked before any connection (the fake stores are never
// opened with a bad combination), each error naming the flag at fault.
func TestLayoutFlags(t *testing.T) {
	storm := []string{"--layout", "storm", "--storm-zk-root", "/so", "--storm-spout-id", "sp", "--storm-group", "g"}
	cases := []struct {
		name    string
		args    []string
		wantErr string // "" : accepted (plan of the fixture runs)
	}{
		{"default layout", nil, ""},
		{"storm complete", storm, ""},
		{"storm stopped", append(storm, "--legacy-stopped"), ""},
		{"unknown layout", []string{"--layout", "kafka-node"}, `--layout: "kafka-node" is not one of consumers, storm`},
		{"storm without root", []string{"--layout", "storm", "--storm-spout-id", "sp", "--storm-group", "g"}, "--layout storm needs --storm-zk-root"},
		{"storm without spout", []string{"--layout", "storm", "--storm-zk-root", "/so", "--storm-group", "g"}, "--layout storm needs --storm-spout-id"},
		{"storm without group", []string{"--layout", "storm", "--storm-zk-root", "/so", "--storm-spout-id", "sp"}, "--layout storm needs --storm-group"},
		{"storm relative root", []string{"--layout", "storm", "--storm-zk-root", "so", "--storm-spout-id", "sp", "--storm-group", "g"}, "expected an absolute path"},
		{"storm spout with slash", []string{"--layout", "storm", "--storm-zk-root", "/so", "--storm-spout-id", "a/b", "--storm-group", "g"}, "storm spout id"},
		{"storm flag without the layout", []string{"--storm-group", "g"}, "--storm-group is only for --layout storm"},
		{"stopped without the layout", []string{"--legacy-stopped"}, "--legacy-stopped is for sources that cannot see the legacy consumers"},
		{"storm from a data directory", append(storm, "--zk-data-dir", "/nowhere"), "--layout storm reads a live ZooKeeper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := run(t, fixture(), append(append([]string{}, c.args...), "migrate", "plan")...)
			if c.wantErr == "" {
				if strings.Contains(stderr, "layout") || code == ExitError {
					t.Fatalf("exit %d, stderr %q: want the plan to run", code, stderr)
				}
				return
			}
			if code != ExitError || !strings.Contains(stderr, c.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitError, c.wantErr)
			}
		})
	}
}

// TestLegacyStoppedIsCommandLineOnly: --legacy-stopped lifts a safety gate, so a shared config
// file or environment variable must never set it.
func TestLegacyStoppedIsCommandLineOnly(t *testing.T) {
	if !commandLineOnly["legacy-stopped"] {
		t.Fatal("--legacy-stopped is not command line only")
	}
}
