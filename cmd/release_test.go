package cmd

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// These tests hold the release files at the repository root to what they promise: the
// goreleaser builds and scripts/release build the same static, reproducible binaries with the
// version in cmd.Version, and the image is a non-root scratch image with a CA bundle. They read
// the files only: `scripts/release --check` runs goreleaser itself, `--reproducible` builds.

// goreleaserBuild is the part of .goreleaser.yaml's builds these tests read.
type goreleaserBuild struct {
	Main         string   `yaml:"main"`
	Binary       string   `yaml:"binary"`
	Env          []string `yaml:"env"`
	Goos         []string `yaml:"goos"`
	Goarch       []string `yaml:"goarch"`
	Flags        []string `yaml:"flags"`
	Ldflags      []string `yaml:"ldflags"`
	ModTimestamp string   `yaml:"mod_timestamp"`
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// versionFlag is the -X flag that sets Version, with the value left to the caller.
func versionFlag() string {
	_ = Version // the variable the flag sets must exist: this fails to compile otherwise
	return "-X " + reflect.TypeOf(globalOptions{}).PkgPath() + ".Version="
}

func TestGoreleaserBuildsStaticReproducibleVersioned(t *testing.T) {
	var cfg struct {
		Builds []goreleaserBuild `yaml:"builds"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, ".goreleaser.yaml")), &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml has %d builds, want 1", len(cfg.Builds))
	}
	b := cfg.Builds[0]
	if b.Main != "." || b.Binary != "zk2kafka" {
		t.Errorf("build main %q binary %q, want . and zk2kafka", b.Main, b.Binary)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build env %q: not static without CGO_ENABLED=0", b.Env)
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("build flags %q: no -trimpath (local paths would make builds differ)", b.Flags)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, want := range []string{"-buildid=", versionFlag() + "{{.Tag}}"} {
		if !strings.Contains(ld, want) {
			t.Errorf("build ldflags %q: no %q", ld, want)
		}
	}
	if b.ModTimestamp == "" {
		t.Error("build has no mod_timestamp: the binaries' mtime would be the build's time")
	}
	slices.Sort(b.Goos)
	slices.Sort(b.Goarch)
	if !slices.Equal(b.Goos, []string{"darwin", "linux"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("build targets %q x %q, want darwin, linux x amd64, arm64", b.Goos, b.Goarch)
	}

	// scripts/release must build what goreleaser builds: the same flags and targets.
	script := readRepoFile(t, "scripts/release")
	wantLd := strings.ReplaceAll(ld, "{{.Tag}}", "$(version)")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "` + wantLd + `"`,
		"TARGETS=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)"} {
		if !strings.Contains(script, want) {
			t.Errorf("scripts/release does not build with %q as .goreleaser.yaml does", want)
		}
	}
	if m := regexp.MustCompile(`GORELEASER=github.com/goreleaser/goreleaser/v2@v\d+\.\d+\.\d+\n`).FindString(script); m == "" {
		t.Error("scripts/release does not pin goreleaser to a release version")
	}
}

func TestDockerfileIsScratchNonRootWithCABundle(t *testing.T) {
	var lines []string
	for l := range strings.SplitSeq(readRepoFile(t, "Dockerfile"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	for _, want := range []string{
		"FROM scratch",
		"COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt",
		"COPY zk2kafka /zk2kafka",
		"USER 65532:65532",
		`ENTRYPOINT ["/zk2kafka"]`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("Dockerfile has no line %q", want)
		}
	}
	if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "FROM ") }); i < 0 || lines[i] != "FROM scratch" ||
		slices.ContainsFunc(lines[i+1:], func(l string) bool { return strings.HasPrefix(l, "FROM ") }) {
		t.Error("Dockerfile is not one stage FROM scratch (a build stage would pull an image)")
	}
}
