package e2e_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// The Storm layout against Storm's own code: scripts/storm/StormSpout.java drives storm-kafka
// 1.2.3's PartitionManager and ZkState (fetched with Maven by scripts/storm-jars) against the
// stack's ZooKeeper and Kafka. The spout emits records it fetches from the broker, takes acks,
// and its commit() writes the partition_<N> znode; a spout created afterwards reads the znode
// back and says where it would resume. zk2kafka's plan, copy and verify are held to both.

var stormClasspath struct {
	once sync.Once
	cp   string
	err  error
}

// stormCP is the classpath of Storm's spout and the driver; without Maven or a JDK the test
// skips, except in CI (.ci/run installs both).
func stormCP(t *testing.T) string {
	t.Helper()
	stormClasspath.once.Do(func() {
		out, err := exec.Command(filepath.Join("..", "scripts", "storm-jars")).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("%w: %s", err, ee.Stderr)
			}
			stormClasspath.err = err
			return
		}
		stormClasspath.cp = strings.TrimSpace(string(out))
	})
	if stormClasspath.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("scripts/storm-jars: %v (.ci/run installs a JDK and Maven)", stormClasspath.err)
		}
		t.Skipf("Storm layout test: scripts/storm-jars failed (needs a JDK and Maven): %v", stormClasspath.err)
	}
	return stormClasspath.cp
}

// needStormBroker skips on a stack whose Kafka storm-kafka cannot talk to: its spout fetches
// with the Kafka 0.8 protocol (Fetch v0, ListOffsets v0), which Kafka 4.0 removed (KIP-896). The
// zk profile's Kafka 3.9, the cluster a Storm topology ran against, still serves it.
func needStormBroker(t *testing.T, e *env) {
	t.Helper()
	if e.st.Profile != "zk" {
		t.Skipf("Storm's spout needs a Kafka that serves the 0.8 protocol: the zk profile, not %s", e.st.Profile)
	}
}

// stormSpout runs Storm's spout for one partition (StormSpout.java's arguments after the
// partition) and returns its report: read, emitted, committed, znode.
func (e *env) stormSpout(root, spout, topic string, partition int, args ...string) map[string]string {
	e.t.Helper()
	argv := append([]string{"-cp", stormCP(e.t), "StormSpout", e.st.ZK, e.st.Kafka, root, spout, topic, strconv.Itoa(partition)}, args...)
	c := exec.CommandContext(e.ctx(), "java", argv...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		e.t.Fatalf("storm spout %s %s/%d %v: %v\n%s\n%s", spout, topic, partition, args, err, out, stderr.String())
	}
	rep := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		rep[k] = v
	}
	return rep
}

// ackAllBut lists 0..n-1 without the given offsets, for --ack.
func ackAllBut(n int, unacked ...int) string {
	var acks []string
	for i := range n {
		skip := false
		for _, u := range unacked {
			skip = skip || i == u
		}
		if !skip {
			acks = append(acks, strconv.Itoa(i))
		}
	}
	return strings.Join(acks, ",")
}

// stormArgs are the layout flags of a spout under root (relative to the test's chroot).
func stormArgs(root, spout, group string) []string {
	return []string{"--layout", "storm", "--storm-zk-root", root, "--storm-spout-id", spout, "--storm-group", group}
}

// TestStormSpoutCopy: Storm's spout commits one topic's partitions (one with un-acked records)
// and a wildcard spout another topic's; Storm reads back where it resumes; zk2kafka plans,
// copies and verifies exactly those offsets into the group the operator names, and refuses to
// copy until it is told the topology is stopped.
func TestStormSpoutCopy(t *testing.T) {
	e := newEnv(t)
	needStormBroker(t, e)
	stormCP(t)
	orders := e.topic(20, 20)
	logs := e.topic(15)
	root := "/kafka-spout-offsets"
	zkRoot := e.chroot + root // storm-kafka takes no chroot: its paths are absolute

	// Partition 0: 20 emitted, 7 and 12 never acked: Storm commits 7, the lowest un-acked
	// offset (it replays 7.. after a restart). Partition 1: 5 emitted and acked: it commits 5,
	// the offset after the last one processed.
	p0 := e.stormSpout(zkRoot, "orders-spout", orders, 0, "--emit", "20", "--ack", ackAllBut(20, 7, 12), "--commit")
	p1 := e.stormSpout(zkRoot, "orders-spout", orders, 1, "--emit", "5", "--ack", "all", "--commit")
	w0 := e.stormSpout(zkRoot, "logs-spout", logs, 0, "--wildcard", "--emit", "15", "--ack", "all", "--commit")
	for _, c := range []struct {
		rep            map[string]string
		emitted, wrote string
	}{{p0, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19", "7"}, {p1, "0,1,2,3,4", "5"}, {w0, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14", "15"}} {
		if c.rep["emitted"] != c.emitted || c.rep["committed"] != c.wrote {
			t.Fatalf("storm spout: %v, want emitted %s and committed %s", c.rep, c.emitted, c.wrote)
		}
	}
	// The znodes as Storm wrote them, read here without zk2kafka.
	for path, want := range map[string]int64{
		zkRoot + "/orders-spout/partition_0":            7,
		zkRoot + "/orders-spout/partition_1":            5,
		zkRoot + "/logs-spout/" + logs + "/partition_0": 15,
	} {
		data, _, err := e.raw.Get(path)
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		var z struct {
			Offset   int64           `json:"offset"`
			Topology json.RawMessage `json:"topology"`
			Broker   json.RawMessage `json:"broker"`
		}
		if err := json.Unmarshal(data, &z); err != nil || z.Offset != want || z.Topology == nil || z.Broker == nil {
			t.Fatalf("%s = %s (%v): want Storm's JSON with offset %d", path, data, err, want)
		}
	}
	// Second opinion: Storm's own reader. A new spout's PartitionManager reads the znode and
	// resumes at its offset unchanged: the offsets are next-to-process, no adjust.
	storm := map[string]int64{}
	for _, r := range []struct {
		spout, topic string
		partition    int
		args         []string
	}{{"orders-spout", orders, 0, nil}, {"orders-spout", orders, 1, nil}, {"logs-spout", logs, 0, []string{"--wildcard"}}} {
		v, err := strconv.ParseInt(e.stormSpout(zkRoot, r.spout, r.topic, r.partition, r.args...)["read"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		storm[fmt.Sprintf("%s/%d", r.topic, r.partition)] = v
	}
	if want := map[string]int64{orders + "/0": 7, orders + "/1": 5, logs + "/0": 15}; !maps.Equal(storm, want) {
		t.Fatalf("Storm resumes at %v, want %v", storm, want)
	}

	g, gl := e.group(), e.group()
	ordersArgs := stormArgs(root, "orders-spout", g)

	// Without --legacy-stopped: planned, but blocked, and copy writes nothing.
	r := e.mustCLI(2, append([]string{"migrate", "plan", "-o", "json"}, ordersArgs...)...)
	doc := decodeJSON[planDoc](t, r)
	gp := doc.groupPlan(t, g)
	if len(gp.Gates) != 1 || gp.Gates[0] != migrate.GateLegacyConsumersAlive || !strings.Contains(migrate.GateReason(gp), "--legacy-stopped") {
		t.Fatalf("plan without --legacy-stopped: gates %v (%s), want legacy-consumers-alive naming --legacy-stopped", gp.Gates, migrate.GateReason(gp))
	}
	e.mustCLI(2, append([]string{"migrate", "copy", "--execute", "--backup", e.file("backup0")}, ordersArgs...)...)
	if c := e.offsets(g); len(c) != 0 {
		t.Fatalf("copy of a gated Storm group wrote %v", c)
	}

	for _, c := range []struct {
		group, spout string
		want         map[string]int64
		znodes       map[string]string
	}{
		{g, "orders-spout", want(orders, map[int32]int64{0: 7, 1: 5}), map[string]string{
			orders + "/0": e.chroot + root + "/orders-spout/partition_0", orders + "/1": e.chroot + root + "/orders-spout/partition_1"}},
		{gl, "logs-spout", want(logs, map[int32]int64{0: 15}), map[string]string{logs + "/0": e.chroot + root + "/logs-spout/" + logs + "/partition_0"}},
	} {
		args := append(stormArgs(root, c.spout, c.group), "--legacy-stopped")
		plan := e.file("plan-" + c.spout)
		r := e.mustCLI(0, append([]string{"migrate", "plan", "-o", "json", "--out", plan}, args...)...)
		gp := decodeJSON[planDoc](t, r).groupPlan(t, c.group)
		planned, znodes := map[string]int64{}, map[string]string{}
		for _, en := range gp.Entries {
			k := fmt.Sprintf("%s/%d", en.Topic, en.Partition)
			if en.Action != migrate.ActionWrite {
				t.Fatalf("plan entry %+v: want a write", en)
			}
			planned[k], znodes[k] = en.Target, en.Znode
		}
		if !maps.Equal(planned, c.want) || !maps.Equal(znodes, c.znodes) {
			t.Fatalf("plan of %s: targets %v znodes %v, want %v %v", c.spout, planned, znodes, c.want, c.znodes)
		}
		e.mustCLI(0, append([]string{"migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup-" + c.spout)}, args...)...)
		if got := e.offsets(c.group); !maps.Equal(got, c.want) {
			t.Fatalf("Kafka group %s after copy: %v, want %v", c.group, got, c.want)
		}
		e.mustCLI(0, append([]string{"migrate", "verify"}, args...)...)
		// export --from zk: the same offsets, with the znodes.
		out := e.mustCLI(0, append([]string{"export", "--format", "csv"}, args...)...)
		var lines []string
		for k, v := range c.want {
			topic, part, _ := strings.Cut(k, "/")
			lines = append(lines, fmt.Sprintf("%s,%s,%s,%d", c.group, topic, part, v))
		}
		for _, l := range lines {
			if !strings.Contains(out.stdout, l+"\n") {
				t.Fatalf("export csv lacks %q:\n%s", l, out.stdout)
			}
		}
	}
	// Storm's reading and zk2kafka's copy agree partition by partition.
	copied := maps.Clone(e.offsets(g))
	maps.Copy(copied, e.offsets(gl))
	if !maps.Equal(copied, storm) {
		t.Fatalf("Kafka holds %v, Storm resumes at %v", copied, storm)
	}

	// Nothing is written back into Storm's znodes.
	r = e.mustCLI(1, append([]string{"migrate", "verify", "--mark"}, append(ordersArgs, "--legacy-stopped")...)...)
	if !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("verify --mark on the Storm layout: want a read-only refusal, got %s", r)
	}
}

// TestStormBadJSON: a partition znode that is not storm-kafka's JSON is invalid-znode naming the
// field at fault, and copy writes nothing for it.
func TestStormBadJSON(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10, 10, 10)
	g := e.group()
	dir := e.chroot + "/so/sp"
	e.ensure(dir)
	for name, data := range map[string]string{
		"partition_0": fmt.Sprintf(`{"topology":{"id":"x","name":"y"},"offset":4,"partition":0,"broker":{"host":"h","port":1},"topic":%q}`, topic),
		"partition_1": fmt.Sprintf(`{"offset":"4","partition":1,"topic":%q}`, topic),
		"partition_2": fmt.Sprintf(`{"offset":4,"partition":5,"topic":%q}`, topic),
	} {
		if _, err := e.raw.Create(dir+"/"+name, []byte(data), 0, worldACL()); err != nil {
			t.Fatal(err)
		}
	}
	args := append(stormArgs("/so", "sp", g), "--legacy-stopped")
	r := e.mustCLI(2, append([]string{"migrate", "plan", "-o", "json"}, args...)...)
	reasons := map[int32]string{}
	for _, en := range decodeJSON[planDoc](t, r).groupPlan(t, g).Entries {
		if en.Class == migrate.ClassInvalidZnode {
			reasons[en.Partition] = en.Reason
		}
	}
	if !strings.Contains(reasons[1], `field "offset"`) || !strings.Contains(reasons[2], `field "partition"`) || len(reasons) != 2 {
		t.Fatalf("invalid-znode reasons %v: want partition 1 naming \"offset\" and 2 naming \"partition\"", reasons)
	}
	e.mustCLI(2, append([]string{"migrate", "copy", "--execute", "--backup", e.file("backup")}, args...)...)
	if got := e.offsets(g); !maps.Equal(got, want(topic, map[int32]int64{0: 4})) {
		t.Fatalf("after copy Kafka holds %v: want only the valid partition 0 at 4", got)
	}
}

// TestStormDualCommit: dual-commit on the Storm layout mirrors each commit of Storm's spout into
// Kafka as ZkState updates the znode in place (the resync is an hour away: the data watch is
// what sees it). --reverse is refused: zk2kafka writes no Storm JSON.
func TestStormDualCommit(t *testing.T) {
	e := newEnv(t)
	needStormBroker(t, e)
	stormCP(t)
	topic := e.topic(30)
	g := e.group()
	zkRoot := e.chroot + "/so"
	args := stormArgs("/so", "sp", g)
	if rep := e.stormSpout(zkRoot, "sp", topic, 0, "--emit", "10", "--ack", "all", "--commit"); rep["committed"] != "10" {
		t.Fatalf("storm spout: %v, want committed 10", rep)
	}
	run := e.dualCommit(append([]string{"--group", g, "--execute", "--resync-interval", "1h"}, args...)...)
	for _, off := range []int64{10, 20, 30} {
		if off > 10 {
			rep := e.stormSpout(zkRoot, "sp", topic, 0, "--emit", "10", "--ack", "all", "--commit")
			if rep["committed"] != strconv.FormatInt(off, 10) {
				t.Fatalf("storm spout: %v, want committed %d", rep, off)
			}
		}
		w := want(topic, map[int32]int64{0: off})
		waitFor(t, func() string { return fmt.Sprintf("kafka %v, want %v\n%s", e.offsets(g), w, run.stderr) },
			func() bool { return maps.Equal(e.offsets(g), w) })
	}
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit exit %d, want 0\n%s", code, run.stderr)
	}
	r := e.mustCLI(1, append([]string{"migrate", "dual-commit", "--group", g, "--execute", "--reverse"}, args...)...)
	if !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("dual-commit --reverse on the Storm layout: want a read-only refusal, got %s", r)
	}
}
