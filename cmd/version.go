package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version, Commit and CommitTime describe a release build, set with -ldflags "-X
// github.com/zk2kafka/zk2kafka/cmd.Version=v0.3.0 -X ...cmd.Commit=<sha> -X ...cmd.CommitTime=<RFC3339>".
// Left empty, as in `go install ...@v0.3.0` or a build from a checkout, the binary's own build
// information answers (see readBuild): a release tool and the go command then agree.
var (
	Version    string
	Commit     string
	CommitTime string
)

// build is what `zk2kafka version` prints; its Version is also the one string zk2kafka writes
// into commit metadata, cutover markers and the zk2kafka_build_info metric.
type build struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time"`
	Modified   bool   `json:"modified"`
	GoVersion  string `json:"go_version"`
}

// readBuild is this binary's build: the -ldflags values where set, its build information for the rest.
func readBuild() build {
	bi, _ := debug.ReadBuildInfo() // nil without build information: resolveBuild says unknown
	return resolveBuild(build{Version: Version, Commit: Commit, CommitTime: CommitTime}, bi, runtime.Version())
}

// pseudoVersion matches the tail of a Go pseudo-version, v0.0.0-20261205010503-20202bb0f1e2:
// the commit time and the 12-digit revision prefix, all a build from the module cache knows.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)

// resolveBuild fills what ld (the -ldflags values) leaves empty from bi: the module version
// ("(devel)" for a plain build from a checkout; a tag or pseudo-version for go install @version
// or, since Go 1.24, for a VCS-stamped checkout) and the vcs.* settings the go command stamps
// unless -buildvcs=false. goVersion is used when bi is nil.
func resolveBuild(ld build, bi *debug.BuildInfo, goVersion string) build {
	b := ld
	b.GoVersion = goVersion
	var vcsTime string
	if bi != nil {
		b.GoVersion = bi.GoVersion
		if b.Version == "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.CommitTime == "" {
		b.CommitTime = vcsTime
	}
	if m := pseudoVersion.FindStringSubmatch(b.Version); m != nil && b.Commit == "" {
		b.Commit = m[2]
		if b.CommitTime == "" {
			t := m[1]
			b.CommitTime = t[:4] + "-" + t[4:6] + "-" + t[6:8] + "T" + t[8:10] + ":" + t[10:12] + ":" + t[12:] + "Z"
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range []*string{&b.Commit, &b.CommitTime, &b.GoVersion} {
		if *s == "" {
			*s = unknown
		}
	}
	return b
}

// unknown stands for what the build does not say.
const unknown = "unknown"

// text is the human form of `zk2kafka version` and `zk2kafka --version`.
func (b build) text() string {
	// Without the build's VCS stamp nothing is known of the tree, "false" included.
	modified := fmt.Sprint(b.Modified)
	if b.Commit == unknown {
		modified = unknown
	}
	return fmt.Sprintf("zk2kafka %s\n  commit:      %s\n  commit time: %s\n  modified:    %s\n  go:          %s\n",
		b.Version, b.Commit, b.CommitTime, modified, b.GoVersion)
}

func (b build) write(w io.Writer, output string) error {
	if output == "json" {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(b)
	}
	_, err := io.WriteString(w, b.text())
	return err
}

func newVersionCmd(b build) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print zk2kafka's version, commit, commit time and Go version",
		Long: `Print zk2kafka's version, the commit it was built from, that commit's time, whether the
working tree had uncommitted changes, and the Go version. A release build carries them from the
release; a go install build from the Go module version and the VCS information Go records.
The version is also what zk2kafka writes into the metadata of every offset it commits.`,
		Example: `  zk2kafka version
  zk2kafka --version
  zk2kafka version -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			return b.write(c.OutOrStdout(), output)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}

// DocTree is zk2kafka's command tree for documentation generators (scripts/gendocs): built,
// never run. Its version is the fixed "(reference)", so generated pages do not change with the
// build that generates them.
func DocTree() *cobra.Command {
	d := defaultDeps(io.Discard, io.Discard)
	d.build = build{Version: "(reference)"}
	return newRootCmd(d, &globalOptions{})
}
