package cmd

import (
	"strings"
	"testing"
)

// TestUnknownCommandsAndFlagsFail checks that a mistyped command line is an error (exit 1)
// naming what was not understood, never a help text with exit 0 that a CI job would take for
// success.
func TestUnknownCommandsAndFlagsFail(t *testing.T) {
	cases := []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"mgirate", "plan"}, ExitError, `unknown command "mgirate"`},
		{[]string{"migrate", "cpy"}, ExitError, `unknown command "cpy" for "zk2kafka migrate"`},
		{[]string{"migrate", "cpy", "--execute"}, ExitError, `unknown flag: --execute`},
		{[]string{"migrate", "copy", "extra"}, ExitError, `unknown command "extra"`},
		{[]string{"migrate", "plan", "--frobnicate"}, ExitError, `unknown flag: --frobnicate`},
		{[]string{"migrate", "copy", "--execute=maybe"}, ExitError, `invalid argument "maybe" for "--execute"`},
		{[]string{"migrate"}, ExitOK, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stdout, stderr, code := run(t, fixture(), c.args...)
			if code != c.wantCode || !strings.Contains(stderr, c.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q\nstdout: %s", code, stderr, c.wantCode, c.wantErr, stdout)
			}
		})
	}
}
