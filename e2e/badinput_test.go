package e2e_test

import (
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// badInput is one entry of the bad-input corpus (issue #7 item 4): a command line, after the
// stores were prepared for group g, that must fail with code and name what is at fault.
type badInput struct {
	name string
	// setup prepares the stores and files for group g (whose ZooKeeper offset is valid unless
	// setup breaks it) and returns the arguments after --zk and --kafka. backup is a fresh path.
	setup func(e *env, g, backup string) []string
	code  int
	want  []string // each must appear in stderr or stdout
}

// TestBadInputCorpus runs every bad input through the real command line (cmd.Execute) against
// the real stack, each time on a group whose valid offsets a copy would otherwise write. Each
// must exit 1 (an error) or 2 (a blocked plan, as DESIGN.md says), name the thing at fault,
// and write nothing: no Kafka commit for the group, the test's ZooKeeper tree unchanged
// (paths and data), and no backup record.
func TestBadInputCorpus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	var corpus []badInput
	corpus = append(corpus, configCorpus()...)
	corpus = append(corpus, flagCorpus()...)
	corpus = append(corpus, znodeCorpus(topic)...)
	corpus = append(corpus, planFileCorpus(topic)...)
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			e := e.sub(t)
			e.dir = t.TempDir()
			g := e.group()
			e.zkOffsets(g, topic, map[int32]int64{0: 3, 1: 4})
			backup := e.file("backup")
			args := c.setup(e, g, backup)
			zkBefore := e.zkTree()
			r := e.cli(args...)
			out := r.stderr + r.stdout
			if r.code != c.code {
				t.Errorf("exit %d, want %d", r.code, c.code)
			}
			for _, w := range c.want {
				if w = strings.ReplaceAll(w, "{dir}", e.dir); !strings.Contains(out, w) {
					t.Errorf("output does not name %q", w)
				}
			}
			if t.Failed() {
				t.Logf("zk2kafka %s\n%s", strings.Join(args, " "), r)
			}
			if got := e.offsets(g); len(got) != 0 {
				t.Errorf("kafka holds %v for group %s after a refused run", got, g)
			}
			if zkAfter := e.zkTree(); !maps.Equal(zkBefore, zkAfter) {
				t.Errorf("the ZooKeeper tree changed: %d znodes before, %d after", len(zkBefore), len(zkAfter))
			}
			if n := backupLines(backup); n > 1 {
				t.Errorf("the backup %s holds %d records", backup, n-1)
			}
		})
	}
}

// copyArgs is a copy that would write group g's offsets.
func copyArgs(g, backup string, extra ...string) []string {
	return append([]string{"migrate", "copy", "--execute", "--backup", backup, "--group", g}, extra...)
}

// configFile writes a --config file with the given content and returns its path.
func (e *env) configFile(content string) string {
	e.t.Helper()
	f := filepath.Join(e.dir, "zk2kafka.yaml")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return f
}

func configCorpus() []badInput {
	withConfig := func(content string) func(e *env, g, backup string) []string {
		return func(e *env, g, backup string) []string {
			return append([]string{"--config", e.configFile(content)}, copyArgs(g, backup)...)
		}
	}
	return []badInput{
		{"config: not YAML", withConfig("zk: [unclosed\n"), 1, []string{"config file", "zk2kafka.yaml"}},
		{"config: binary", withConfig("\x00\xff\xfe\x01"), 1, []string{"config file", "zk2kafka.yaml"}},
		{"config: a list at the top", withConfig("- zk\n- kafka\n"), 1, []string{"config file", "zk2kafka.yaml"}},
		{"config: unknown key", withConfig("kafak: 127.0.0.1:9092\n"), 1, []string{"unknown key(s) kafak"}},
		{"config: execute from a file", withConfig("execute: true\n"), 1, []string{`"execute" is taken only from the command line`}},
		{"config: not a number", withConfig("zk-connections: many\n"), 1, []string{"zk-connections", "many"}},
		{"config: out of range", withConfig("zk-connections: -1\n"), 1, []string{"--zk-connections: -1"}},
		{"config: duration without unit", withConfig("zk-session-timeout: 10\n"), 1, []string{"zk-session-timeout", "missing unit"}},
		{"config: bad policy", withConfig("on-conflict: newest\n"), 1, []string{"newest"}},
		{"config: missing file", func(e *env, g, backup string) []string {
			return append([]string{"--config", filepath.Join(e.dir, "nope.yaml")}, copyArgs(g, backup)...)
		}, 1, []string{"nope.yaml"}},
		{"config: a folder", func(e *env, g, backup string) []string {
			return append([]string{"--config", e.dir}, copyArgs(g, backup)...)
		}, 1, []string{"config file {dir}"}},
	}
}

func flagCorpus() []badInput {
	with := func(extra ...string) func(e *env, g, backup string) []string {
		return func(e *env, g, backup string) []string { return copyArgs(g, backup, extra...) }
	}
	return []badInput{
		{"flag: unknown", with("--frobnicate"), 1, []string{"unknown flag: --frobnicate"}},
		{"flag: unknown shorthand", with("-x"), 1, []string{"unknown shorthand flag: 'x'"}},
		{"flag: positional argument", with("orders"), 1, []string{`unknown command "orders"`}},
		{"flag: mistyped subcommand", func(*env, string, string) []string {
			return []string{"migrate", "cpy"}
		}, 1, []string{`unknown command "cpy"`}},
		{"flag: on-conflict", with("--on-conflict=newest"), 1, []string{"--on-conflict", "newest"}},
		{"flag: out-of-range", with("--out-of-range=wrap"), 1, []string{"--out-of-range", "wrap"}},
		{"flag: offset-adjust not a number", with("--offset-adjust=one"), 1, []string{`invalid argument "one" for "--offset-adjust"`}},
		{"flag: offset-adjust overflows", with("--offset-adjust=9223372036854775808"), 1, []string{"--offset-adjust", "out of range"}},
		{"flag: group regex", with("--group-regex=("), 1, []string{"group-regex", "missing closing )"}},
		{"flag: batch-groups 0", with("--batch-groups=0"), 1, []string{"--batch-groups"}},
		{"flag: output", with("-o", "yaml"), 1, []string{`--output: "yaml"`}},
		{"flag: zk-connections", with("--zk-connections=65"), 1, []string{"--zk-connections: 65"}},
		{"flag: replan without plan", with("--replan"), 1, []string{"--replan needs --plan"}},
		{"flag: selection with a plan", func(e *env, g, backup string) []string {
			return copyArgs(g, backup, "--plan", e.savePlanOf(g))
		}, 1, []string{"--group: a saved plan (--plan) carries its own selection"}},
	}
}

// znodeCorpus breaks group g's ZooKeeper offsets: the plan blocks (exit 2, DESIGN.md) and the
// reason names the znode's data or name.
func znodeCorpus(topic string) []badInput {
	data := func(d, why string) badInput {
		return badInput{"znode data " + quoteShort(d), func(e *env, g, backup string) []string {
			e.deleteZnode(g, topic, "0")
			e.setZnode(g, topic, "1", d)
			return copyArgs(g, backup)
		}, 2, []string{why, "invalid-znode"}}
	}
	child := func(name, why string) badInput {
		return badInput{"partition child " + name, func(e *env, g, backup string) []string {
			e.deleteZnode(g, topic, "0")
			e.deleteZnode(g, topic, "1")
			e.setZnode(g, topic, name, "3")
			return copyArgs(g, backup)
		}, 2, []string{why, "invalid-znode"}}
	}
	name := func(what, t string) badInput {
		return badInput{"topic name " + what, func(e *env, g, backup string) []string {
			e.deleteZnode(g, topic, "0")
			e.deleteZnode(g, topic, "1")
			e.setZnode(g, t, "0", "3")
			return copyArgs(g, backup)
		}, 2, []string{t, "topic-missing"}}
	}
	return []badInput{
		data("abc", "not a decimal number"),
		data("3.5", "not a decimal number"),
		data("0x10", "not a decimal number"),
		data("-1", "sentinel"),
		data("-5", "negative offset"),
		data("", "empty offset data"),
		data(" \n", "only whitespace"),
		data("9223372036854775808", "beyond the int64 range"),
		data("99999999999999999999999999", "beyond the int64 range"),
		data(strings.Repeat("9", 1000000), "(1000000 bytes)"),
		data(`{"offset":3}`, "not a decimal number"),
		child("0-1", "0.7-era"),
		child("01", "leading zero"),
		child("2147483648", "beyond the int32 range"),
		child("p1", "not a partition number"),
		name("of 250 characters", strings.Repeat("t", 250)),
		name("in unicode", "tópico-ü"),
		name("with a space", "my topic"),
	}
}

func quoteShort(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// setZnode writes an offset znode of group g (creating it or setting its data).
func (e *env) setZnode(g, topic, partition, data string) {
	e.t.Helper()
	p := path.Join(e.chroot, "consumers", g, "offsets", topic, partition)
	e.ensure(path.Dir(p))
	if _, err := e.raw.Set(p, []byte(data), -1); err == nil {
		return
	}
	if _, err := e.raw.Create(p, []byte(data), 0, worldACL()); err != nil {
		e.t.Fatalf("create znode %s: %v", p, err)
	}
}

func (e *env) deleteZnode(g, topic, partition string) {
	e.t.Helper()
	p := path.Join(e.chroot, "consumers", g, "offsets", topic, partition)
	if err := e.raw.Delete(p, -1); err != nil {
		e.t.Fatalf("delete znode %s: %v", p, err)
	}
}

// zkTree is every znode under the test's chroot with its data.
func (e *env) zkTree() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		data, _, err := e.raw.Get(p)
		if err != nil {
			e.t.Fatalf("read znode %s: %v", p, err)
		}
		out[p] = string(data)
		kids, _, err := e.raw.Children(p)
		if err != nil {
			e.t.Fatalf("list znode %s: %v", p, err)
		}
		for _, k := range kids {
			walk(p + "/" + k)
		}
	}
	walk(e.chroot)
	return out
}

// savePlanOf saves the plan of group g alone and returns its path.
func (e *env) savePlanOf(g string) string {
	e.t.Helper()
	f := filepath.Join(e.dir, stacktest.Name(e.t, "plan")+".json")
	e.mustCLI(0, "migrate", "plan", "--group", g, "--out", f)
	if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
		e.t.Fatalf("plan --out %s wrote no file", f)
	}
	return f
}
