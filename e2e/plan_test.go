package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/verify"
)

// TestPlanClasses seeds one group per class in the real stores and checks the class, action,
// target and exit code that `migrate plan -o json --group G` reports for it.
func TestPlanClasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10) // log [0, 10] in partitions 0 and 1
	trimmed := e.topic(10)
	e.raiseLogStart(trimmed, 0, 6) // log [6, 10], as after retention
	missing := stacktest.Name(t, "never-created")

	zkOnly := func(topic string, p int32, off int64) func(e *env, g string) {
		return func(e *env, g string) { e.zkOffsets(g, topic, map[int32]int64{p: off}) }
	}
	both := func(zk, kafka int64) func(e *env, g string) {
		return func(e *env, g string) {
			e.zkOffsets(g, topic, map[int32]int64{0: zk})
			e.kafkaCommit(g, topic, "e2e", map[int32]int64{0: kafka})
		}
	}
	raw := func(data string) func(e *env, g string) {
		return func(e *env, g string) { e.rawZnode(g, topic, 0, data) }
	}
	cases := []struct {
		name   string
		seed   func(e *env, g string)
		topic  string
		part   int32
		zk     int64 // the ZooKeeper offset the entry shows; -1 for an invalid znode
		class  migrate.Class
		action migrate.Action
		target int64 // checked for writes
		exit   int
	}{
		{"equal", both(5, 5), topic, 0, 5, migrate.ClassEqual, migrate.ActionSkip, 0, 0},
		{"zk-only", zkOnly(topic, 0, 5), topic, 0, 5, migrate.ClassZKOnly, migrate.ActionWrite, 5, 0},
		{"zk-only at log end", zkOnly(topic, 1, 10), topic, 1, 10, migrate.ClassZKOnly, migrate.ActionWrite, 10, 0},
		{"zk-ahead", both(7, 3), topic, 0, 7, migrate.ClassZKAhead, migrate.ActionWrite, 7, 0},
		{"kafka-ahead", both(3, 7), topic, 0, 3, migrate.ClassKafkaAhead, migrate.ActionSkip, 0, 0},
		{"below-log-start", zkOnly(trimmed, 0, 2), trimmed, 0, 2, migrate.ClassBelowLogStart, migrate.ActionBlock, 0, 2},
		{"above-log-end", zkOnly(topic, 1, 11), topic, 1, 11, migrate.ClassAboveLogEnd, migrate.ActionBlock, 0, 2},
		{"topic-missing", zkOnly(missing, 0, 1), missing, 0, 1, migrate.ClassTopicMissing, migrate.ActionBlock, 0, 2},
		{"partition-missing", zkOnly(topic, 5, 1), topic, 5, 1, migrate.ClassPartitionMissing, migrate.ActionBlock, 0, 2},
		{"invalid-znode -1", raw("-1"), topic, 0, -1, migrate.ClassInvalidZnode, migrate.ActionBlock, 0, 2},
		{"invalid-znode empty", raw(""), topic, 0, -1, migrate.ClassInvalidZnode, migrate.ActionBlock, 0, 2},
		{"invalid-znode abc", raw("abc"), topic, 0, -1, migrate.ClassInvalidZnode, migrate.ActionBlock, 0, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := e.sub(t)
			g := e.group()
			c.seed(e, g)
			r := e.mustCLI(c.exit, "migrate", "plan", "-o", "json", "--group", g)
			doc := decodeJSON[planDoc](t, r)
			if len(doc.Groups) != 1 || doc.Safe != (c.exit == 0) {
				t.Fatalf("want one group, safe=%v; got %d groups, safe=%v\n%s", c.exit == 0, len(doc.Groups), doc.Safe, r)
			}
			gp := doc.groupPlan(t, g)
			if len(gp.Gates) != 0 || len(gp.Entries) != 1 {
				t.Fatalf("want one entry and no gate, got gates %v, %d entries: %+v", gp.Gates, len(gp.Entries), gp.Entries)
			}
			en := gp.Entries[0]
			if en.Topic != c.topic || en.Partition != c.part || en.Class != c.class || en.Action != c.action {
				t.Errorf("entry %s/%d %s/%s (%s), want %s/%d %s/%s", en.Topic, en.Partition, en.Class, en.Action, en.Reason,
					c.topic, c.part, c.class, c.action)
			}
			if got := offsetOr(en.ZK, -1); got != c.zk {
				t.Errorf("zk_offset %d, want %d", got, c.zk)
			}
			if c.action == migrate.ActionWrite && en.Target != c.target {
				t.Errorf("target %d, want %d", en.Target, c.target)
			}
			if suffix := fmt.Sprintf("/consumers/%s/offsets/%s/%d", g, c.topic, c.part); !strings.HasSuffix(en.Znode, suffix) {
				t.Errorf("znode %q, want one ending in %q", en.Znode, suffix)
			}
		})
	}
}

func offsetOr(v *int64, none int64) int64 {
	if v == nil {
		return none
	}
	return *v
}

// TestPlanGates checks that each group-level gate blocks the whole group with exit 2, and that
// the same group plans clean once the cause is gone: the gate, not the offsets, blocked it.
func TestPlanGates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	offsets := map[int32]int64{0: 4, 1: 5}
	gated := func(t *testing.T, e *env, g string, gate migrate.Gate) migrate.GroupPlan {
		t.Helper()
		r := e.mustCLI(2, "migrate", "plan", "-o", "json", "--group", g)
		gp := decodeJSON[planDoc](t, r).groupPlan(t, g)
		if !slices.Equal(gp.Gates, []migrate.Gate{gate}) {
			t.Errorf("gates %v, want [%s]", gp.Gates, gate)
		}
		if len(gp.Entries) != len(offsets) {
			t.Fatalf("%d entries, want %d: %+v", len(gp.Entries), len(offsets), gp.Entries)
		}
		for _, en := range gp.Entries {
			if en.Class != migrate.ClassZKOnly || en.Action != migrate.ActionBlock || !strings.Contains(en.Reason, string(gate)) {
				t.Errorf("entry %s/%d: %s/%s (%s), want zk-only/block naming %s", en.Topic, en.Partition, en.Class, en.Action, en.Reason, gate)
			}
		}
		return gp
	}
	clean := func(t *testing.T, e *env, g string) {
		t.Helper()
		r := e.mustCLI(0, "migrate", "plan", "-o", "json", "--group", g)
		if s := decodeJSON[planDoc](t, r).Summary; s.ByAction[migrate.ActionWrite] != len(offsets) {
			t.Errorf("without the gate: %d writes, want %d\n%s", s.ByAction[migrate.ActionWrite], len(offsets), r)
		}
	}

	t.Run("legacy-consumers-alive", func(t *testing.T) {
		e := e.sub(t)
		g := e.group()
		e.zkOffsets(g, topic, offsets)
		id := g + "_host-1700000000000-abcdef12"
		unregister, err := e.zr.RegisterLiveConsumer(e.ctx(), g, id, []migrate.TopicPartition{tp(topic, 0), tp(topic, 1)})
		if err != nil {
			t.Fatal(err)
		}
		gp := gated(t, e, g, migrate.GateLegacyConsumersAlive)
		if !slices.ContainsFunc(gp.LiveConsumers, func(s string) bool { return strings.Contains(s, id) }) {
			t.Errorf("live_legacy_consumers %v does not name %s", gp.LiveConsumers, id)
		}
		if err := unregister(); err != nil {
			t.Fatal(err)
		}
		clean(t, e, g)
	})

	t.Run("kafka-group-active", func(t *testing.T) {
		e := e.sub(t)
		g := e.group()
		e.zkOffsets(g, topic, offsets)
		m := e.join(g, []string{topic}, idle{})
		gp := gated(t, e, g, migrate.GateKafkaGroupActive)
		if gp.KafkaState != "Stable" || gp.KafkaMembers != 1 {
			t.Errorf("kafka_state %q with %d members, want Stable with 1", gp.KafkaState, gp.KafkaMembers)
		}
		m.close()
		m.waitState("Empty", 0)
		clean(t, e, g)
	})
}

// TestPlanChroot puts the same group with different offsets in the test's chroot and in a
// chroot below it: each --zk host:port/chroot sees only its own, and an absent chroot is an
// error, not an empty store.
func TestPlanChroot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 3})
	nested := e.chroot + "/nested"
	e.ensure(nested + "/consumers/" + g + "/offsets/" + topic)
	if _, err := e.raw.Create(nested+"/consumers/"+g+"/offsets/"+topic+"/0", []byte("8"), 0, worldACL()); err != nil {
		t.Fatal(err)
	}
	for zkURL, off := range map[string]int64{e.zkURL: 3, e.st.ZK + nested: 8} {
		r := e.cliAt(zkURL, "migrate", "plan", "-o", "json", "--group", g)
		if r.code != 0 {
			t.Fatalf("--zk %s: %s", zkURL, r)
		}
		gp := decodeJSON[planDoc](t, r).groupPlan(t, g)
		if len(gp.Entries) != 1 || offsetOr(gp.Entries[0].ZK, -1) != off {
			t.Errorf("--zk %s: entries %+v, want one with zk_offset %d", zkURL, gp.Entries, off)
		}
	}
	absent := e.chroot + "/absent"
	r := e.cliAt(e.st.ZK+absent, "migrate", "plan", "-o", "json")
	if r.code != 1 || !strings.Contains(r.stderr, absent) {
		t.Errorf("--zk with an absent chroot: want exit 1 naming %s, got %s", absent, r)
	}
}

// TestPlanTopicFilterKeepsUnlistableGroup: a group whose offsets folder the tool may not list
// (a ZooKeeper digest ACL) has unknown topics, so a topic filter must not drop it: plan and
// verify with --topic-regex report it, blocked, and exit 2 instead of a clean plan that copies
// nothing for it.
func TestPlanTopicFilterKeepsUnlistableGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 3})
	const user, pass = "owner", "zk-pass-5d1e0a9b"
	folder := fmt.Sprintf("%s/consumers/%s/offsets", e.chroot, g)
	e.protect(t, folder, user, pass)

	for _, re := range []string{"^" + topic + "$", "^no-such-topic$"} {
		r := e.cli("migrate", "plan", "-o", "json", "--group", g, "--topic-regex", re)
		if r.code != 2 {
			t.Fatalf("plan --topic-regex %s: want exit 2, got %s", re, r)
		}
		gp := decodeJSON[planDoc](t, r).groupPlan(t, g)
		if len(gp.Entries) != 1 || gp.Entries[0].Class != migrate.ClassInvalidZnode || gp.Entries[0].Znode != folder ||
			!strings.Contains(gp.Entries[0].Reason, "access denied") {
			t.Errorf("plan --topic-regex %s: entries %+v, want one invalid-znode naming %s", re, gp.Entries, folder)
		}
		v := e.cli("migrate", "verify", "-o", "json", "--group", g, "--topic-regex", re)
		if rep := decodeJSON[verify.Report](t, v); v.code != 2 || rep.Pass || len(rep.Groups) != 1 || rep.Groups[0].Group != g {
			t.Errorf("verify --topic-regex %s: want exit 2 failing group %s, got %s", re, g, v)
		}
	}
}

// TestPlanCSVForKafkaTool feeds `plan -o csv` to Kafka's own consumer-groups tool
// (--reset-offsets --from-file --dry-run): it must accept the file and list exactly the
// planned writes, and a skipped partition must not be in the file.
func TestPlanCSVForKafkaTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10, 10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2, 1: 5, 2: 9})
	e.kafkaCommit(g, topic, "e2e", map[int32]int64{1: 7}) // kafka-ahead: kept, not in the CSV
	r := e.mustCLI(0, "migrate", "plan", "-o", "csv", "--group", g)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	slices.Sort(lines)
	wantLines := []string{g + "," + topic + ",0,2", g + "," + topic + ",2,9"}
	if !slices.Equal(lines, wantLines) {
		t.Fatalf("csv lines %q, want %q", lines, wantLines)
	}
	file := filepath.Join(e.dir, "reset.csv")
	if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// --from-file is a reset scenario of its own: the tool needs neither --all-topics nor --topic.
	out, err := e.st.KafkaTool(e.ctx(), stacktest.ConsumerGroupClass, "--bootstrap-server", e.st.Kafka,
		"--reset-offsets", "--from-file", file, "--group", g, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseReset(out, g)
	if err != nil {
		t.Fatal(err)
	}
	if w := want(topic, map[int32]int64{0: 2, 2: 9}); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --reset-offsets --dry-run lists %v, want %v\n%s", got, w, out)
	}
	if got, w := e.offsets(g), want(topic, map[int32]int64{1: 7}); !maps.Equal(got, w) {
		t.Errorf("after the dry run Kafka holds %v, want %v (untouched)", got, w)
	}
}

// parseReset reads the GROUP TOPIC PARTITION NEW-OFFSET rows of a reset. Kafka 3.9 prints
// them without line breaks between rows, so the output is read as a stream of fields.
func parseReset(out, group string) (map[string]int64, error) {
	got := map[string]int64{}
	f := strings.Fields(out)
	for i := 0; i+3 < len(f); i++ {
		if f[i] != group {
			continue
		}
		p, perr := strconv.ParseInt(f[i+2], 10, 32)
		off, oerr := strconv.ParseInt(f[i+3], 10, 64)
		if perr != nil || oerr != nil {
			return nil, fmt.Errorf("reset output: row %q: not partition and offset", strings.Join(f[i:i+4], " "))
		}
		got[tp(f[i+1], int32(p)).String()] = off
		i += 3
	}
	return got, nil
}
