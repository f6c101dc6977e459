package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/cmd"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// The command line as the tests drive it, and the files and documents it produces.

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs zk2kafka in-process against this test's chroot and the stack's Kafka.
func (e *env) cli(args ...string) result {
	e.t.Helper()
	return e.cliAt(e.zkURL, args...)
}

// cliAt runs zk2kafka in-process with --zk zkURL.
func (e *env) cliAt(zkURL string, args ...string) result {
	e.t.Helper()
	return e.run(zkURL, e.kafkaForCLI(), args...)
}

// cliBootstrap runs zk2kafka in-process with --kafka bootstrap.
func (e *env) cliBootstrap(bootstrap string, args ...string) result {
	e.t.Helper()
	return e.run(e.zkURL, bootstrap, args...)
}

func (e *env) run(zkURL, bootstrap string, args ...string) result {
	e.t.Helper()
	var out, errOut bytes.Buffer
	argv := append(append(append([]string{"--zk", zkURL}, e.zkArgs...), append([]string{"--kafka", bootstrap}, e.kafkaArgs...)...), args...)
	code := cmd.Execute(e.ctx(), argv, &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// mustCLI runs the command line and fails unless it exits with code.
func (e *env) mustCLI(code int, args ...string) result {
	e.t.Helper()
	r := e.cli(args...)
	if r.code != code {
		e.t.Fatalf("zk2kafka %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// planDoc is plan --output json: the plan, its summary and its verdict.
type planDoc struct {
	migrate.Plan
	Summary migrate.Summary `json:"summary"`
	Safe    bool            `json:"safe"`
}

func decodeJSON[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("decode JSON output: %v\n%s", err, r)
	}
	return v
}

// groupPlan returns the plan of group g, failing the test when it is absent.
func (d planDoc) groupPlan(t *testing.T, g string) migrate.GroupPlan {
	t.Helper()
	i := slices.IndexFunc(d.Groups, func(gp migrate.GroupPlan) bool { return gp.Group == g })
	if i < 0 {
		t.Fatalf("plan has no group %q: %+v", g, d.Groups)
	}
	return d.Groups[i]
}

// copyDoc is copy --output json.
type copyDoc struct {
	Fingerprint string                         `json:"plan_fingerprint"`
	Result      copier.Result                  `json:"result"`
	Counts      map[copier.PartitionStatus]int `json:"counts"`
	PlanSummary migrate.Summary                `json:"plan_summary"`
}

// savePlan runs plan --out and returns the plan file's path; the plan must be safe.
func (e *env) savePlan() string {
	e.t.Helper()
	f := filepath.Join(e.dir, stacktest.Name(e.t, "plan")+".json")
	e.mustCLI(0, "migrate", "plan", "--out", f)
	return f
}

// file is a fresh path in the test's folder.
func (e *env) file(name string) string { return filepath.Join(e.dir, stacktest.Name(e.t, name)) }

// backup creates a backup file for a copy run directly through copier.Copier.
func (e *env) backup(fingerprint string) *copier.FileBackup {
	e.t.Helper()
	b, err := copier.CreateBackup(e.file("backup"), fingerprint, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := b.Close(); err != nil {
			e.t.Errorf("close backup %s: %v", b.Path(), err)
		}
	})
	return b
}

// readBackup parses a backup file: the header line, then one record per line.
func readBackup(t *testing.T, file string) (copier.BackupHeader, []copier.BackupRecord) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var h copier.BackupHeader
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Backup != copier.BackupSchemaVersion {
		t.Fatalf("backup %s: header %q: %v", file, lines[0], err)
	}
	var recs []copier.BackupRecord
	for _, l := range lines[1:] {
		var r copier.BackupRecord
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("backup %s: record %q: %v", file, l, err)
		}
		recs = append(recs, r)
	}
	return h, recs
}

// checkRefused fails unless r is a refusal (a non-zero exit) whose stderr says each of want and
// none of hidden, and group g got no commit.
func (e *env) checkRefused(r result, g string, want []string, hidden ...string) {
	e.t.Helper()
	if r.code == 0 {
		e.t.Fatalf("exit 0, want a refusal\n%s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			e.t.Errorf("stderr lacks %q:\n%s", w, r)
		}
	}
	for _, h := range hidden {
		assertHidden(e.t, h, r)
	}
	if got := e.offsets(g); len(got) != 0 {
		e.t.Errorf("group %s has commits after a refusal: %v", g, got)
	}
}
