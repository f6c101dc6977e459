package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// rootedLegacy is the in-memory legacy store with what zkreader.Reader says of where it looks:
// its groups folder and a folder of groups one chroot level down.
type rootedLegacy struct {
	*migratetest.LegacyStore
	nearby []migrate.NearbyRoot
}

func (rootedLegacy) GroupsRoot() string { return "/consumers" }
func (r rootedLegacy) NearbyRoots(context.Context) ([]migrate.NearbyRoot, error) {
	return r.nearby, nil
}

type rootedStores struct {
	legacy rootedLegacy
	kafka  *migratetest.KafkaStore
}

func (s rootedStores) OpenLegacy(_ context.Context, g *globalOptions, _ *deps) (*legacy.Source, error) {
	return staticSource(s.legacy, g), nil
}

func (s rootedStores) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	return s.kafka, func() {}, nil
}

// TestEmptySelectionRefused: every verb that reads offsets refuses a selection that matches no
// group (exit 1), naming the selection as given, the folder looked under, how many groups are
// there and the --zk of the groups found one chroot level down; nothing is written. With
// --allow-empty each runs, on nothing.
func TestEmptySelectionRefused(t *testing.T) {
	dir := t.TempDir()
	restoreFile := filepath.Join(dir, "offsets.csv")
	if err := os.WriteFile(restoreFile, []byte("g1,t,0,10\ng2,t,0,5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sel := []string{"--group-regex", "^billing-"}
	cases := []struct {
		verb  string
		args  []string
		file  string // a file the verb must not create
		wants []string
	}{
		{verb: "plan", args: []string{"migrate", "plan", "--out", filepath.Join(dir, "plan.json")}, file: filepath.Join(dir, "plan.json")},
		{verb: "copy", args: []string{"migrate", "copy", "--execute", "--backup", filepath.Join(dir, "b.jsonl")}, file: filepath.Join(dir, "b.jsonl")},
		{verb: "verify", args: []string{"migrate", "verify"}},
		{verb: "export", args: []string{"export", "--file", filepath.Join(dir, "e.json")}, file: filepath.Join(dir, "e.json")},
		{verb: "restore", args: []string{"restore", "--to", "kafka", "--file", restoreFile, "--execute", "--backup", filepath.Join(dir, "r.jsonl")},
			file:  filepath.Join(dir, "r.jsonl"),
			wants: []string{`the selection (--group-regex "^billing-") matches no offset of its 2 group(s)`, "--allow-empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.verb, func(t *testing.T) {
			f := fixture()
			stores := rootedStores{legacy: rootedLegacy{LegacyStore: f.legacy,
				nearby: []migrate.NearbyRoot{{Root: "/kafka/consumers", Connect: "zk1:2181/kafka", Groups: 7}}}, kafka: f.kafka}
			wants := tc.wants
			if wants == nil {
				wants = []string{`the selection (--group-regex "^billing-") matches no group under /consumers (2 groups there)`,
					"/kafka/consumers holds 7 groups: to read it, use --zk zk1:2181/kafka", "--allow-empty"}
			}
			out, errOut, code := runWith(t, stores, nil, append(tc.args, sel...)...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitError, out, errOut)
			}
			for _, w := range wants {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tc.file != "" {
				if _, err := os.Stat(tc.file); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created (err %v)", tc.file, err)
				}
			}
			out, errOut, code = runWith(t, stores, nil, append(append(tc.args, sel...), "--allow-empty")...)
			if code != ExitOK {
				t.Fatalf("--allow-empty: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if n := len(f.kafka.Commits()); n != 0 {
				t.Errorf("%d commits, want none", n)
			}
		})
	}
}

// TestEmptySelectionForms: a --group not there is still "group not found" (--allow-empty does
// not hide a typo in a name); a topic filter that leaves the selected groups no offset is an
// empty selection too; a saved plan of nothing needs --allow-empty again to be copied.
func TestEmptySelectionForms(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	cases := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{name: "missing named group", args: []string{"migrate", "plan", "--group", "g1", "--group", "nope", "--allow-empty"}, code: ExitError,
			wants: []string{`group "nope" (--group): group not found under /consumers (2 groups there)`}},
		{name: "topic filter leaves nothing", args: []string{"migrate", "verify", "--topic-regex", "^other$"}, code: ExitError,
			wants: []string{`the selection (--topic-regex "^other$") matches 2 groups under /consumers, none with an offset of a topic it selects`}},
		{name: "topic filter leaves nothing: plan", args: []string{"migrate", "plan", "--topic-regex", "^other$", "--out", filepath.Join(dir, "p2.json")}, code: ExitError,
			wants: []string{`none with an offset of a topic it selects`}},
		{name: "empty plan saved", args: []string{"migrate", "plan", "--group-regex", "^none", "--allow-empty", "--out", planFile}, code: ExitOK},
		{name: "empty plan copied", args: []string{"migrate", "copy", "--plan", planFile}, code: ExitError,
			wants: []string{`the selection (--group-regex "^none") matches no group`}},
		{name: "empty plan copied, allowed", args: []string{"migrate", "copy", "--plan", planFile, "--allow-empty"}, code: ExitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, fixture(), tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.wants {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "p2.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused plan left its file (err %v)", err)
	}
}

// TestDualCommitEmptySelectionHint: dual-commit waits on an empty selection (no error) and its
// warning says how many groups are there and where groups were found one chroot level off.
func TestDualCommitEmptySelectionHint(t *testing.T) {
	o, errb := testObserver(t, true)
	o.nearby = func() string {
		return migrate.NearbyHint([]migrate.NearbyRoot{{Root: "/kafka/consumers", Connect: "zk1:2181/kafka", Groups: 3}})
	}
	o.SelectionChanged(mirror.Selection{Listed: 4})
	want := `level=WARN msg="waiting for a group matching the selection" under="every group under /consumers" groups_there=4 ` +
		`hint="/kafka/consumers holds 3 groups: to read it, use --zk zk1:2181/kafka"`
	if !strings.Contains(errb.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, errb.String())
	}
}

// TestSelectionWithoutOffsetsRefused: groups selected but without a single offset (only a
// registered consumer, or stale folders) check nothing: verify and plan refuse them as an empty
// selection. --allow-empty is taken only from the command line: from the environment it would
// turn the gate green on nothing again.
func TestSelectionWithoutOffsetsRefused(t *testing.T) {
	t.Setenv("ZK2KAFKA_ALLOW_EMPTY", "true")
	for _, verb := range []string{"plan", "verify"} {
		t.Run(verb, func(t *testing.T) {
			f := fixture()
			f.legacy.SetLive("idle", "ids/c1")
			out, errOut, code := run(t, f, "migrate", verb, "--group", "idle")
			if code != ExitError || !strings.Contains(errOut, `matches 1 group under /consumers, none with an offset of a topic it selects`) {
				t.Fatalf("exit %d, want 1 naming the group without offsets\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if _, errOut, code := run(t, f, "migrate", verb, "--group", "idle", "--allow-empty"); code != ExitOK {
				t.Errorf("--allow-empty on the command line: exit %d, want 0\n%s", code, errOut)
			}
		})
	}
}
