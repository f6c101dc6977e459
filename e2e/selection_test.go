package e2e_test

import (
	"fmt"
	"path"
	"strings"
	"testing"
)

// TestEmptySelectionChrootHint: the legacy consumers commit under a chroot one level below the
// one --zk names (<chroot>/kafka/consumers, as the consumers of a ZooKeeper-mode cluster that
// share the brokers' chroot): plan and verify refuse the empty selection (exit 1), nothing is
// written, and the message names the folder looked under, its group count and the --zk to use;
// that --zk then plans the group.
func TestEmptySelectionChrootHint(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the real stack")
	}
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	p := fmt.Sprintf("%s/kafka/consumers/%s/offsets/%s/0", e.chroot, g, topic)
	e.ensure(path.Dir(p))
	if _, err := e.raw.Create(p, []byte("5"), 0, worldACL()); err != nil {
		t.Fatalf("create znode %s: %v", p, err)
	}
	e.ensure(e.chroot + "/consumers") // the folder --zk reads: there, but empty
	for _, verb := range [][]string{{"migrate", "plan"}, {"migrate", "verify"}} {
		r := e.cli(verb...)
		if r.code != 1 {
			t.Fatalf("%s: want exit 1, got %s", strings.Join(verb, " "), r)
		}
		for _, w := range []string{
			"the selection (every group) matches no group under " + e.chroot + "/consumers (no group there)",
			e.chroot + "/kafka/consumers holds 1 group: to read it, use --zk " + e.zkURL + "/kafka",
		} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", strings.Join(verb, " "), w, r)
			}
		}
	}
	if got := e.offsets(g); len(got) != 0 {
		t.Errorf("Kafka holds %v for %s, want nothing", got, g)
	}
	if r := e.cliAt(e.zkURL+"/kafka", "migrate", "plan", "-o", "csv"); r.code != 0 || r.stdout != fmt.Sprintf("%s,%s,0,5\n", g, topic) {
		t.Errorf("plan with the --zk of the hint: %s", r)
	}
}
