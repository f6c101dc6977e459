package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestImagePlanVerify builds the container image (scripts/release --image: the Dockerfile, the
// static binary, the CA bundle) with buildah and runs `migrate plan` and `migrate verify` from
// inside it against the real stack: chroot isolation shares this machine's loopback. It needs
// buildah: without it the test skips, except in CI (CI set, as .ci/run sets it) where the image is part of the
// release and its absence fails the run.
func TestImagePlanVerify(t *testing.T) {
	e := newEnv(t)
	if _, err := exec.LookPath("buildah"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("buildah not found in CI: .ci/run installs it (apt-get install buildah)")
		}
		t.Skip("image test: buildah not found (apt-get install buildah)")
	}
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("image test: runs buildah as root (chroot isolation, vfs storage); CI runs it as root")
	}
	topic := e.topic(10, 10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 3, 1: 4})

	// A storage of the test's own, removed with the temporary folder: no image or container
	// outlives the test, and none of the machine's is touched.
	store := t.TempDir()
	b := buildah{t: t, global: []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}}
	t.Cleanup(func() { b.run("rm", "--all") }) // before the folder goes: unmounts what it mounted
	tag := "localhost/" + strings.ToLower(stacktest.Name(t, "zk2kafka")) + ":test"
	script := exec.Command(filepath.Join(stacktest.RepoRoot(), "scripts", "release"), "--image", tag)
	script.Env = append(os.Environ(), "BUILDAH_ROOT="+b.global[1], "BUILDAH_RUNROOT="+b.global[3])
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release --image %s: %v\n%s", tag, err, out)
	}
	if user := strings.TrimSpace(b.must("inspect", "--type", "image", "--format", "{{.OCIv1.Config.User}}", tag)); user != "65532:65532" {
		t.Errorf("image runs as user %q, want 65532:65532 (non-root)", user)
	}
	ctr := strings.TrimSpace(b.must("from", "--quiet", tag))
	// The CA bundle is the one Go reads on Linux, for TLS to Kafka (the image has no shell to
	// look with: the container's root is mounted here instead).
	root := strings.TrimSpace(b.must("mount", ctr))
	if ca, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil || !bytes.Contains(ca, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Errorf("image has no CA bundle at /etc/ssl/certs/ca-certificates.crt: %v", err)
	}
	b.must("umount", ctr)

	// inImage runs zk2kafka in the container with the stack's addresses.
	inImage := func(args ...string) result {
		t.Helper()
		argv := append([]string{"run", "--isolation", "chroot", ctr, "--", "/zk2kafka", "--zk", e.zkURL, "--kafka", e.st.Kafka}, args...)
		return b.run(argv...)
	}
	r := inImage("migrate", "plan", "-o", "json")
	if r.code != 0 {
		t.Fatalf("plan in the image: want exit 0, got %s", r)
	}
	plan := decodeJSON[planDoc](t, r)
	if gp := plan.groupPlan(t, g); len(gp.Entries) != 2 || !plan.Safe {
		t.Errorf("plan in the image: group %s has %d entries (want 2), safe %v\n%s", g, len(gp.Entries), plan.Safe, r)
	}
	// Before the copy Kafka has nothing: verify finds the drift and says so with exit 2.
	if r := inImage("migrate", "verify"); r.code != 2 || !strings.Contains(r.stdout+r.stderr, g) {
		t.Errorf("verify in the image before the copy: want exit 2 naming %s, got %s", g, r)
	}
	e.mustCLI(0, "migrate", "copy", "--execute", "--backup", e.file("backup"))
	if r := inImage("migrate", "verify"); r.code != 0 {
		t.Errorf("verify in the image after the copy: want exit 0, got %s", r)
	}
}

// buildah runs buildah on a storage of its own.
type buildah struct {
	t      *testing.T
	global []string
}

func (b buildah) run(args ...string) result {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	c := exec.CommandContext(ctx, "buildah", append(append([]string{}, b.global...), args...)...)
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := c.ProcessState.ExitCode()
	if err != nil && code <= 0 {
		b.t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (b buildah) must(args ...string) string {
	b.t.Helper()
	r := b.run(args...)
	if r.code != 0 {
		b.t.Fatalf("buildah %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}
