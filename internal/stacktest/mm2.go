package stacktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StopMirrorMaker2 stops the mm2 stack's MirrorMaker 2 by its pid (the one scripts/stack wrote
// to mm2.pid) and returns once it is gone, with the function that starts it again (scripts/stack
// restart mm2, which waits until it replicates); when t ends, that is called if it was not. MirrorMaker 2 is the one process of the
// profile a test may stop on a shared stack: it keeps no state the other tests read but
// replication, which resumes where its committed source offsets left off.
func (s *Stack) StopMirrorMaker2(t testing.TB) (start func()) {
	t.Helper()
	if !s.MirrorMaker2 {
		t.Fatalf("StopMirrorMaker2 on the %s profile", s.Profile)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "mm2.pid"))
	if err != nil {
		t.Fatalf("MirrorMaker 2's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("MirrorMaker 2's pid file holds %q", b)
	}
	started := false
	start = func() {
		if started {
			return
		}
		started = true
		cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "stack"), "restart", s.Profile, "mm2", "0")
		cmd.Env = append(os.Environ(), "STACK_NAME="+filepath.Base(s.Dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("start MirrorMaker 2 again: %v\n%s", err, out)
		}
	}
	t.Cleanup(start)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop MirrorMaker 2 (pid %d): %v", pid, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return start
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("MirrorMaker 2 (pid %d) still runs a minute after SIGTERM (%v)", pid, err))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
