package cmd

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// The operations kit in ../deploy starts this command. These tests hold its Kubernetes manifest
// and systemd unit to what deploy/README.md promises, and parse their command lines and settings
// with the real command, so a renamed flag or config key fails here and not at a rollout.

// stopBudget is what SIGTERM may take: the final flush (mirror.Mirror's FlushTimeout default,
// 10 s) and the metrics server's shutdown (5 s, serveMetrics).
const stopBudget = 15 * time.Second

// dualCommitLine parses a dual-commit command line (without the program) as the binary would:
// flags, then the config file or environment (applyConfig), then the global options' checks
// (setup), with the password file replaced by a dummy one since its real path exists only on
// the target. It returns the command, to read the resolved flags from.
func dualCommitLine(t *testing.T, args []string) *cobra.Command {
	t.Helper()
	if len(args) < 2 || args[0] != "migrate" || args[1] != "dual-commit" {
		t.Fatalf("command line %q does not start with migrate dual-commit", args)
	}
	d := defaultDeps(io.Discard, io.Discard)
	g := &globalOptions{}
	c, _, err := newRootCmd(d, g).Find(args[:2])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ParseFlags(args[2:]); err != nil {
		t.Fatalf("dual-commit rejects %q: %v", args[2:], err)
	}
	if rest := c.Flags().Args(); len(rest) > 0 {
		t.Fatalf("dual-commit takes no arguments, got %q", rest)
	}
	if err := applyConfig(c, g.configFile); err != nil {
		t.Fatalf("settings of %q: %v", args, err)
	}
	dummy := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(dummy, []byte("not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	passwordFile := g.kafkaSec.passwordFile
	g.kafkaSec.passwordFile = dummy
	if err := g.setup(d); err != nil {
		t.Fatalf("settings of %q: %v", args, err)
	}
	g.kafkaSec.passwordFile = passwordFile // the flag reads it again
	return c
}

// clearEnv hides the ZK2KAFKA_* variables of the test's own environment from the command.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, envPrefix+"_") {
			t.Setenv(k, "") // an empty variable is unset to applyConfig and to the password lookup
		}
	}
}

func flagValue(t *testing.T, c *cobra.Command, name string) string {
	t.Helper()
	f := c.Flags().Lookup(name)
	if f == nil {
		t.Fatalf("dual-commit has no --%s", name)
	}
	return f.Value.String()
}

func metricsPort(t *testing.T, c *cobra.Command) string {
	t.Helper()
	_, port, err := net.SplitHostPort(flagValue(t, c, "metrics-addr"))
	if err != nil || port == "" || port == "0" {
		t.Fatalf("--metrics-addr %q: want host:port with a fixed port (%v)", flagValue(t, c, "metrics-addr"), err)
	}
	return port
}
