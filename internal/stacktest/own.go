package stacktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// EnvFaults enables the fault tests (broker and ZooKeeper restarts): they start a stack of their
// own, which costs tens of seconds and, on a small machine, load the other tests share.
const EnvFaults = "ZK2KAFKA_FAULT_TESTS"

// Own starts a stack for this test alone, of the same profile as the shared one, so the test
// may restart its processes without disturbing any other test; it is stopped when t ends.
// The test is skipped unless EnvFaults is set (and under -short).
func Own(t testing.TB, prefix string) *Stack {
	t.Helper()
	if os.Getenv(EnvFaults) == "" {
		t.Skipf("fault test: starts and restarts a stack of its own; set %s=1 to run it", EnvFaults)
	}
	profile := Get(t).Profile
	s := &Stack{Profile: profile, started: fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1_000_000)}
	t.Cleanup(func() {
		if err := s.run("down"); err != nil {
			t.Errorf("stop own stack: %v", err)
		}
	})
	if err := s.run("up"); err != nil {
		t.Fatalf("own stack: %v", err)
	}
	st, err := readEnv(filepath.Join(RepoRoot(), ".stack", "run", s.started, "stack.env"))
	if err != nil {
		t.Fatal(err)
	}
	st.started = s.started
	return st
}

// Restart stops one process of a stack started by Own ("kafka" or "zookeeper") and starts it
// again on the same port and data, returning once it is ready.
func (s *Stack) Restart(t testing.TB, process string) {
	t.Helper()
	if s.started == "" {
		t.Fatal("Restart needs a stack of the test's own (stacktest.Own)")
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "stack"), "restart", s.Profile, process)
	cmd.Env = append(os.Environ(), "STACK_NAME="+s.started)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/stack restart %s %s: %v\n%s", s.Profile, process, err, out)
	}
}
