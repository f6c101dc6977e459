package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// targetFixture: the source's znodes are fixture()'s (g1 t/0 10, t/1 20, g2 t/0 5); the
// target replicates t as src.t, partition 0 from source offset 4 on, partition 1 not at all.
func targetFixture() (fakeStores, *migratetest.KafkaStore, migratetest.Translator) {
	f := fixture()
	k := migratetest.NewKafkaStore()
	k.AddTopic("src.t", migrate.PartitionRange{LogEnd: 96}, migrate.PartitionRange{LogEnd: 100})
	tr := migratetest.Translator{Prefix: "src.", Start: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 4}}
	return f, k, tr
}

func runTarget(t *testing.T, stores fakeStores, target *migratetest.KafkaStore, tr migrate.Translator, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	d := defaultDeps(&out, &errb)
	d.stores = stores
	d.target = func(context.Context, *globalOptions, *targetOptions, *deps) (migrate.KafkaStore, migrate.Translator, func(), error) {
		return target, tr, func() {}, nil
	}
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), exitCode(err)
}

var mm2Args = []string{"--target-kafka", "target:9092", "--mm2-source-alias", "src", "--mm2-target-alias", "tgt"}

func TestPlanIntoTarget(t *testing.T) {
	stores, target, tr := targetFixture()
	out, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "plan", "-o", "json"}, mm2Args...)...)
	if code != ExitUnsafe {
		t.Fatalf("exit %d, want %d (t/1 has no sync): %s", code, ExitUnsafe, errOut)
	}
	var plan migrate.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, g := range plan.Groups {
		for _, e := range g.Entries {
			got[fmt.Sprintf("%s/%s/%d", g.Group, e.Topic, e.Partition)] = fmt.Sprintf("%s %s %d", e.Class, e.Action, e.Target)
		}
	}
	want := map[string]string{"g1/src.t/0": "zk-only write 6", "g1/src.t/1": "no-offset-sync block 0", "g2/src.t/0": "zk-only write 1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if target.Commits() != nil || stores.kafka.Commits() != nil {
		t.Error("plan committed")
	}
}

// The table names the source topic and offset beside the target's, and the re-read bound.
func TestPlanIntoTargetTable(t *testing.T) {
	stores, target, tr := targetFixture()
	tr.Reread = map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 3}
	out, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "plan", "-o", "table"}, mm2Args...)...)
	if code != ExitUnsafe {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"│ GROUP │ SOURCE TOPIC │ TOPIC │ PARTITION │     CLASS      │ SOURCE ZK │ ZK │ KAFKA │",
		"│ g1    │ t            │ src.t │ 0         │ zk-only        │ 10        │ 6  │ -     │ 0         │ 96      │ write  │ 6      │ 3          │",
		"up to 3 records read again", "no-offset-sync"} {
		if !strings.Contains(out, want) {
			t.Errorf("table without %q:\n%s", want, out)
		}
	}
}

func TestCopyIntoTarget(t *testing.T) {
	stores, target, tr := targetFixture()
	stores.legacy.DeleteOffset("g1", "t", 1) // the partition without a sync would block the copy
	_, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "copy", "--execute", "--backup", t.TempDir() + "/b.jsonl"}, mm2Args...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := map[string]int64{}
	for _, c := range target.Commits() {
		got[c.Group+"/"+c.Topic+"/"+strconv.Itoa(int(c.Partition))] = c.Offset
	}
	if len(got) != 2 || got["g1/src.t/0"] != 6 || got["g2/src.t/0"] != 1 {
		t.Errorf("target commits %v, want g1/src.t/0 at 6 and g2/src.t/0 at 1", got)
	}
	if stores.kafka.Commits() != nil {
		t.Errorf("the source cluster was written: %v", stores.kafka.Commits())
	}
}

func TestTargetFlagsRefused(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "an alias without a target", args: []string{"migrate", "plan", "--mm2-target-alias", "tgt"}, want: "--mm2-target-alias is for a target cluster"},
		{name: "target security without a target", args: []string{"migrate", "copy", "--target-kafka-tls"}, want: "--target-kafka-tls is for a target cluster"},
		{name: "no target alias", args: []string{"migrate", "plan", "--target-kafka", "t:9092", "--mm2-source-alias", "src"}, want: "needs --mm2-target-alias"},
		{name: "no source alias under the default policy", args: []string{"migrate", "plan", "--target-kafka", "t:9092", "--mm2-target-alias", "tgt"}, want: "needs --mm2-source-alias"},
		{name: "syncs on the target without the source alias they are named after",
			args: []string{"migrate", "plan", "--target-kafka", "t:9092", "--mm2-target-alias", "tgt", "--replication-policy", "identity", "--mm2-offset-syncs-location", "target"},
			want: "--mm2-offset-syncs-location target needs --mm2-source-alias"},
		{name: "an unknown policy", args: append([]string{"migrate", "plan", "--replication-policy", "custom"}, mm2Args...), want: `replication policy "custom"`},
		{name: "an unknown location", args: append([]string{"migrate", "plan", "--mm2-offset-syncs-location", "both"}, mm2Args...), want: `"both" is not one of [source target]`},
		{name: "an offset adjust", args: append([]string{"migrate", "plan", "--offset-adjust", "1"}, mm2Args...), want: "--offset-adjust 1 cannot be applied"},
		{name: "an offset adjust in verify", args: append([]string{"migrate", "verify", "--offset-adjust", "1"}, mm2Args...), want: "--offset-adjust 1 cannot be applied"},
		{name: "an offset adjust in dual-commit", args: append([]string{"migrate", "dual-commit", "--offset-adjust", "-1"}, mm2Args...), want: "--offset-adjust -1 cannot be applied"},
		{name: "dual-commit --reverse into a target", args: append([]string{"migrate", "dual-commit", "--reverse"}, mm2Args...),
			want: "--reverse with --target-kafka"},
		{name: "the syncs interval without a target", args: []string{"migrate", "dual-commit", "--mm2-offset-syncs-interval", "5s"},
			want: "--mm2-offset-syncs-interval is for a target cluster"},
		{name: "a syncs interval too short", args: append([]string{"migrate", "dual-commit", "--mm2-offset-syncs-interval", "10ms"}, mm2Args...),
			want: "--mm2-offset-syncs-interval: 10ms is too short"},
		{name: "target SASL flags of another mechanism", args: append([]string{"migrate", "plan", "--target-kafka-sasl-oauth-scope", "x"}, mm2Args...),
			want: "--target-kafka-sasl-oauth-scope is for --target-kafka-sasl-mechanism OAUTHBEARER"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stores, target, tr := targetFixture()
			_, errOut, code := runTarget(t, stores, target, tr, tc.args...)
			if code != ExitError || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d with %q", code, errOut, ExitError, tc.want)
			}
			if target.Commits() != nil || stores.kafka.Commits() != nil {
				t.Error("something was written")
			}
		})
	}
}

// verify against the target: the copied partitions match after translation, the one without a
// sync is not-replicated, and a target commit ahead of the translation fails (records skipped).
func TestVerifyTarget(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		commit map[string]int64 // "group/partition" -> the target's commit of src.t
		want   map[string]string
		failed []string // the partitions that fail
		code   int
	}{
		{name: "equal after translation", commit: map[string]int64{"g1/0": 6, "g2/0": 1},
			want: map[string]string{"g1/0": "match", "g1/1": "not-replicated", "g2/0": "match"}, failed: []string{"g1/1"}, code: ExitUnsafe},
		{name: "the target ahead: records skipped", commit: map[string]int64{"g1/0": 7, "g2/0": 1},
			want: map[string]string{"g1/0": "kafka-ahead", "g2/0": "match"}, failed: []string{"g1/0", "g1/1"}, code: ExitUnsafe},
		{name: "the target behind: records read again, none skipped", args: []string{"--group", "g2"}, commit: map[string]int64{"g2/0": 0},
			want: map[string]string{"g2/0": "kafka-behind"}, code: ExitOK},
		{name: "the target behind under --strict", args: []string{"--group", "g2", "--strict"}, commit: map[string]int64{"g2/0": 0},
			want: map[string]string{"g2/0": "kafka-behind"}, failed: []string{"g2/0"}, code: ExitUnsafe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stores, target, tr := targetFixture()
			for k, off := range tc.commit {
				g, p, _ := strings.Cut(k, "/")
				part, _ := strconv.Atoi(p)
				target.SetCommitted(g, "src.t", int32(part), off)
			}
			out, errOut, code := runTarget(t, stores, target, tr, append(append([]string{"migrate", "verify", "-o", "json"}, tc.args...), mm2Args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			var rep struct {
				Groups []struct {
					Group      string
					Partitions []struct {
						Topic     string
						Partition int32
						Status    string
						OK        bool
						Source    *migrate.Source
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := map[string]string{}
			for _, g := range rep.Groups {
				for _, p := range g.Partitions {
					if p.Topic != "src.t" || p.Source == nil || p.Source.Topic != "t" {
						t.Errorf("partition %+v: want the target's topic with its source", p)
					}
					k := fmt.Sprintf("%s/%d", g.Group, p.Partition)
					got[k] = p.Status
					if p.OK == slices.Contains(tc.failed, k) {
						t.Errorf("%s: %s ok %v, want failing: %v", k, p.Status, p.OK, slices.Contains(tc.failed, k))
					}
				}
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q (all %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// A saved plan records its translation: copy refuses to run it translated another way (or not
// at all), and runs it translated alike.
func TestCopyPlanOfAnotherTranslation(t *testing.T) {
	stores, target, tr := targetFixture()
	stores.legacy.DeleteOffset("g1", "t", 1)
	plan := t.TempDir() + "/plan.json"
	if _, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "plan", "--out", plan}, mm2Args...)...); code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	other := append([]string(nil), mm2Args...)
	other[len(other)-1] = "elsewhere"
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "another target alias", args: other, code: ExitError, want: "MirrorMaker 2 translation differ"},
		{name: "the same", args: mm2Args, code: ExitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "copy", "--plan", plan}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("copy --plan: exit %d, stderr %q; want exit %d with %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

// verify --topic-regex against a target names the source's topics: the target's commit of a
// partition ZooKeeper lacks, on a selected topic, is missing-in-zk as in place.
func TestVerifyTargetTopicFilter(t *testing.T) {
	stores, target, tr := targetFixture()
	target.SetCommitted("g1", "src.t", 0, 6)
	target.SetCommitted("g2", "src.t", 0, 1)
	target.SetCommitted("g2", "src.t", 1, 9) // g2 has no znode of t/1
	out, errOut, code := runTarget(t, stores, target, tr, append([]string{"migrate", "verify", "--group", "g2", "--topic-regex", "^t$", "-o", "json"}, mm2Args...)...)
	if code != ExitUnsafe || !strings.Contains(out, `"status": "missing-in-zk"`) {
		t.Fatalf("exit %d, want %d with missing-in-zk:\n%s%s", code, ExitUnsafe, out, errOut)
	}
}

// The offset-syncs topic is named after the cluster that does not hold it, as MirrorMaker 2 names
// it: the target's alias on the source, the source's on the target (a real MirrorMaker 2 3.9.1
// with offset-syncs.topic.location=target made mm2-offset-syncs_idsrc_internal).
func TestSyncsTopic(t *testing.T) {
	cases := []struct {
		on, sep, want string
	}{
		{"source", ".", "mm2-offset-syncs.tgt.internal"},
		{"target", ".", "mm2-offset-syncs.src.internal"},
		{"target", "_", "mm2-offset-syncs_src_internal"},
	}
	for _, c := range cases {
		opts := targetOptions{sourceAlias: "src", targetAlias: "tgt", syncsOn: c.on, separator: c.sep}
		if got := opts.syncsTopic(); got != c.want {
			t.Errorf("syncs on the %s, separator %q: %s, want %s", c.on, c.sep, got, c.want)
		}
	}
}
