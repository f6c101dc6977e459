package cmd

import (
	"strings"
	"testing"
)

// TestDryRunSpelledOut checks --dry-run, the consumer-groups tool's spelling of the default, on
// every verb that writes: alone it is the dry run (same output, nothing written); with
// --execute, in either order, it is an error naming both before any store is opened;
// --dry-run=false is refused rather than read as a write.
func TestDryRunSpelledOut(t *testing.T) {
	csv := writeFile(t, "r.csv", "g1,t,0,15\n")
	verbs := []struct {
		name string
		args []string
		want string // in the dry run's output
	}{
		{"copy", []string{"migrate", "copy"}, "2 would be written"},
		{"restore", []string{"restore", "--to", "kafka", "--file", csv}, "1 would be written"},
		// Its dry run runs until stopped: TestDualCommitRunsUntilStopped runs it with --dry-run.
		{"dual-commit", []string{"migrate", "dual-commit", "--zk", "z:1", "--kafka", "k:1"}, ""},
	}
	for _, v := range verbs {
		t.Run(v.name, func(t *testing.T) {
			if v.want != "" {
				s := writableFixture()
				plain, _, code := runWith(t, s, nil, v.args...)
				if code != ExitOK || !strings.Contains(plain, v.want) {
					t.Fatalf("without --dry-run: exit %d\n%s", code, plain)
				}
				out, errOut, code := runWith(t, s, nil, append(v.args, "--dry-run")...)
				if code != ExitOK || out != plain || len(s.kafka.Commits()) != 0 || s.legacy.writeCount() != 0 {
					t.Fatalf("--dry-run: exit %d, %d commits, %d znodes written\n%s\n%s\nwithout it:\n%s",
						code, len(s.kafka.Commits()), s.legacy.writeCount(), out, errOut, plain)
				}
			}
			for _, extra := range [][]string{
				{"--dry-run", "--execute"},
				{"--execute", "--dry-run"},
				{"--execute", "--dry-run=true"},
			} {
				_, errOut, code := runWith(t, unopenable{t}, nil, append(v.args, extra...)...)
				if code != ExitError || !strings.Contains(errOut, "--dry-run and --execute together") {
					t.Errorf("%v: exit %d, stderr %q", extra, code, errOut)
				}
			}
			_, errOut, code := runWith(t, unopenable{t}, nil, append(v.args, "--dry-run=false")...)
			if code != ExitError || !strings.Contains(errOut, "pass --execute to write") {
				t.Errorf("--dry-run=false: exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// TestDryRunNotFromConfig: --dry-run sits beside --execute, taken only from the command line,
// so that a file cannot make every --execute an error far from where it was set.
func TestDryRunNotFromConfig(t *testing.T) {
	cfg := writeFile(t, "c.yaml", "dry-run: true\n")
	_, errOut, code := runWith(t, unopenable{t}, nil, "migrate", "copy", "--config", cfg)
	if code != ExitError || !strings.Contains(errOut, `"dry-run" is taken only from the command line`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
