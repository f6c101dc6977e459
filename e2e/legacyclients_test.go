package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// brokerChroot is the ZooKeeper chroot of the zk profile's broker (scripts/stack). A legacy
// client is pointed at it, as it was pointed at its cluster's chroot: it reads /brokers there and
// keeps /consumers beside it, and the broker stores OffsetCommit v0 there too.
const brokerChroot = "/kafka"

// legacyClient is one row of docs/legacy-clients.md: a real legacy client, run against the zk
// stack to learn what it leaves in /consumers.
type legacyClient struct {
	name string // the subtest's name, and the folder scripts/legacy-clients installs it in
	// consume runs the client in dir (its install folder): it reads every record of topic (k of
	// them) as group from the oldest, commits and exits.
	consume func(ctx context.Context, dir, zkURL, kafka, topic, group string, k int) *exec.Cmd
	// adjust is the --offset-adjust the row documents: the client stored "next offset to
	// consume" minus adjust (0: the next offset, 1: the last consumed).
	adjust int64
	// inKafka: the client's commit lands in Kafka's offset store, not in ZooKeeper (the row
	// documents that nothing is left to migrate). Such a client runs in-process (run).
	inKafka bool
	run     func(t *testing.T, e *env, topic, group string, k int)
}

var legacyClients = []legacyClient{
	{name: "scala-1.1.1", consume: scalaConsumer},
	{name: "kafka-node-3.0.1", consume: kafkaNode},
	{name: "kafka-node-2.6.1", consume: kafkaNode},
	{name: "kafka-python-0.9.5", consume: func(ctx context.Context, dir, _, kafka, topic, group string, k int) *exec.Cmd {
		return exec.CommandContext(ctx, filepath.Join(dir, "venv", "bin", "python"),
			legacySource("kafka-python-0.9.5", "consume.py"), kafka, topic, group, strconv.Itoa(k))
	}},
	{name: "sarama-1.61.1-v0.8.2", inKafka: true, run: saramaOffsetManager},
}

// scalaConsumer runs the Scala high-level consumer installed in dir (Consume.java, compiled
// against that release's jars: scala-1.1.1 here, scala-0.10.2.2 in brokerversion_test.go).
func scalaConsumer(ctx context.Context, dir, zkURL, _, topic, group string, k int) *exec.Cmd {
	return exec.CommandContext(ctx, "java", "-Xmx256m", "-XX:+UseSerialGC",
		"-cp", filepath.Join(dir, "libs", "*")+string(os.PathListSeparator)+filepath.Join(dir, "classes"),
		"Consume", zkURL, topic, group, strconv.Itoa(k))
}

func kafkaNode(ctx context.Context, dir, zkURL, _, topic, group string, k int) *exec.Cmd {
	c := exec.CommandContext(ctx, "node", legacySource("kafka-node", "consume.js"), zkURL, topic, group, strconv.Itoa(k))
	c.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	return c
}

func legacySource(p ...string) string {
	return filepath.Join(append([]string{stacktest.RepoRoot(), "e2e", "legacyclients"}, p...)...)
}

// TestLegacyClients measures each row of docs/legacy-clients.md against the real client: the
// stack's topic holds k records, the client consumes all k as a new group and commits, and the
// znode it leaves must hold k minus the row's --offset-adjust (k: it stored the next offset to
// consume; k-1: the last one consumed). Then more records are produced, `migrate copy` runs with
// the row's adjust, and a real Kafka consumer of the group must start at record k and read every
// later record once: nothing lost, nothing read twice. A row whose runtime is missing on this
// machine skips, naming it (scripts/legacy-clients exits 3); in CI that is a failure instead.
func TestLegacyClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.st.Profile != "zk" {
		t.Skipf("legacy clients need a ZooKeeper-mode broker (the zk profile); the stack is %s", e.st.Profile)
	}
	const k, n = 7, 12 // k records when the client runs, n after the copy
	zkURL := e.st.ZK + brokerChroot
	for _, lc := range legacyClients {
		t.Run(lc.name, func(t *testing.T) {
			e := e.sub(t)
			topic, g, znode := legacyGroup(t, e, k)

			if lc.inKafka {
				lc.run(t, e, topic, g, k)
				if ok, _, err := e.raw.Exists(znode); err != nil || ok {
					t.Fatalf("%s: %s exists (err %v): the client was to commit to Kafka only", lc.name, znode, err)
				}
				if got := e.offsets(g); got[tp(topic, 0).String()] != k {
					t.Fatalf("%s: Kafka holds %v for group %s, want %s/0 at %d (the next offset)", lc.name, got, g, topic, k)
				}
			} else {
				dir := installLegacyClient(t, lc.name)
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				defer cancel()
				cmd := lc.consume(ctx, dir, zkURL, e.st.Kafka, topic, g, k)
				out, err := cmd.CombinedOutput()
				t.Logf("%s:\n%s", lc.name, out)
				if err != nil {
					t.Fatalf("%s: %v", lc.name, err)
				}
				stored := readLegacyOffset(t, e, fmt.Sprintf("%s/offsets/%s/0", znode, topic))
				t.Logf("%s stored %d after consuming offsets 0..%d", lc.name, stored, k-1)
				if stored != k-lc.adjust {
					t.Fatalf("%s stored %d after consuming %d records: the row says %d (next offset %d, --offset-adjust %d)",
						lc.name, stored, k, k-lc.adjust, k, lc.adjust)
				}
				// The client's session is gone with its process, and with it its registration;
				// a lingering one would block the group (legacy-consumers-alive).
				waitNoLegacyMembers(t, e, znode+"/ids")
			}

			e.produce(topic, k, n)
			if !lc.inKafka {
				adj := strconv.FormatInt(lc.adjust, 10)
				r := e.cliAt(zkURL, "migrate", "copy", "--group", g, "--offset-adjust", adj, "--execute",
					"--backup", e.file("backup"), "-o", "json")
				if r.code != 0 {
					t.Fatalf("migrate copy --group %s --offset-adjust %s: %s", g, adj, r)
				}
				if doc := decodeJSON[copyDoc](t, r); doc.Counts[copier.StatusWritten] != 1 {
					t.Fatalf("copy counts %v, want 1 written\n%s", doc.Counts, r)
				}
				if r := e.cliAt(zkURL, "migrate", "verify", "--group", g, "--offset-adjust", adj, "--strict"); r.code != 0 {
					t.Errorf("migrate verify --group %s --offset-adjust %s --strict: %s", g, adj, r)
				}
			}

			expectResume(t, e, lc.name, topic, g, k, n)
		})
	}
}

// legacyGroup makes a fresh topic holding k records in partition 0 and a fresh group name, and
// removes the group's znode (under the broker's chroot, where the legacy clients commit) when
// the test ends.
func legacyGroup(t *testing.T, e *env, k int) (topic, group, znode string) {
	t.Helper()
	topic = e.topic(0)
	e.produce(topic, 0, k)
	group = e.group()
	znode = fmt.Sprintf("%s/consumers/%s", brokerChroot, group)
	t.Cleanup(func() {
		if err := deleteTree(e.raw, znode); err != nil {
			t.Errorf("delete %s: %v", znode, err)
		}
	})
	return topic, group, znode
}

// expectResume runs a current Kafka consumer of group after the cutover from who: it must start
// at record k of topic's partition 0 and read every record up to the log end n once each,
// nothing lost, nothing read twice.
func expectResume(t *testing.T, e *env, who, topic, group string, k, n int64) {
	t.Helper()
	tr := newTracker(map[migrate.TopicPartition]int64{tp(topic, 0): n})
	m := e.join(group, []string{topic}, tr)
	select {
	case <-tr.done:
	case <-time.After(joinTimeout):
		t.Fatalf("group %s: the Kafka consumer did not read to the log end (%d) within %s", group, n, joinTimeout)
	}
	m.close()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var want []int64
	for o := k; o < n; o++ {
		want = append(want, o)
	}
	if start, got := tr.initial[tp(topic, 0)], tr.got[tp(topic, 0)]; start != k || !slices.Equal(got, want) {
		t.Errorf("%s: the Kafka consumer started at %d and read %v; want the first unconsumed record %d, then %v once each",
			who, start, got, k, want)
	}
}

// installLegacyClient installs the client with scripts/legacy-clients (cached under .stack) and
// returns its folder; it skips the row when the script reports its runtime missing (exit 3).
func installLegacyClient(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(stacktest.RepoRoot(), "scripts", "legacy-clients"), name)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return filepath.Join(stacktest.RepoRoot(), ".stack", "legacy-clients", name)
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		t.Skipf("%s not measured here: %s", name, strings.TrimSpace(stderr.String()))
	default:
		t.Fatalf("scripts/legacy-clients %s: %v\n%s", name, err, stderr.String())
	}
	return ""
}

// readLegacyOffset reads an offset znode as zk2kafka does: a decimal string.
func readLegacyOffset(t *testing.T, e *env, p string) int64 {
	t.Helper()
	data, _, err := e.raw.Get(p)
	if err != nil {
		t.Fatalf("read %s: %v (the client was to commit there)", p, err)
	}
	off, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatalf("%s holds %q, not a decimal offset", p, data)
	}
	return off
}

// waitNoLegacyMembers polls until ids has no children (or does not exist).
func waitNoLegacyMembers(t *testing.T, e *env, ids string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids, _, err := e.raw.Children(ids)
		if errors.Is(err, zk.ErrNoNode) || (err == nil && len(kids) == 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still lists %v (err %v) 30s after the client exited", ids, kids, err)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, not an assertion
	}
}

// produce appends records from..to-1 (values "r<offset>") to partition 0 of topic, as one
// record batch. One batch because kafka-node 2.6.1 misreads a fetch that spans several batches
// from this broker (it delivers offset 0 again and commits 1; docs/legacy-clients.md): the rows
// measure what each client stores for what it consumed, which that would hide.
func (e *env) produce(topic string, from, to int) {
	e.t.Helper()
	cfg := e.producerConfig()
	// Hold the records until all are there: sarama otherwise sends the first one alone.
	cfg.Producer.Flush.Messages = to - from
	cfg.Producer.Flush.MaxMessages = to - from
	prod, err := sarama.NewSyncProducer([]string{e.st.Kafka}, cfg)
	if err != nil {
		e.t.Fatalf("producer: %v", err)
	}
	defer func() {
		if err := prod.Close(); err != nil {
			e.t.Errorf("close producer: %v", err)
		}
	}()
	var msgs []*sarama.ProducerMessage
	for i := from; i < to; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("r%d", i))})
	}
	if err := prod.SendMessages(msgs); err != nil {
		e.t.Fatalf("produce %d records to %s/0: %v", to-from, topic, err)
	}
}

// saramaOffsetManager is sarama's OffsetManager at the oldest protocol level sarama accepts
// (Config.Version 0.8.2.0, sarama.MinVersion), as a consumer without a group used it: it reads k
// records, marks the next offset (sarama's convention: MarkOffset takes the offset to resume
// from) and commits. Its commits are OffsetCommit v1 at the least, which the broker stores in
// Kafka: the row checks that nothing reaches ZooKeeper.
func saramaOffsetManager(t *testing.T, e *env, topic, group string, k int) {
	cfg := sarama.NewConfig()
	cfg.ClientID = "zk2kafka-legacy-sarama"
	cfg.Version = sarama.V0_8_2_0
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Return.Errors = true
	client, err := sarama.NewClient([]string{e.st.Kafka}, cfg)
	if err != nil {
		t.Fatalf("sarama client at %s: %v", cfg.Version, err)
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		t.Fatal(err)
	}
	pom, err := om.ManagePartition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	next, _ := pom.NextOffset()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, next)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	timeout := time.After(joinTimeout)
	for i := 0; i < k; i++ {
		select {
		case msg := <-pc.Messages():
			pom.MarkOffset(msg.Offset+1, "")
		case err := <-pc.Errors():
			t.Fatalf("consume %s/0: %v", topic, err)
		case <-timeout:
			t.Fatalf("consumed %d of %d records within %s", i, k, joinTimeout)
		}
	}
	om.Commit() // synchronous: one flush to the coordinator
	// With auto-commit off, only the manager's Close releases the partition manager and closes
	// its error channel (pom.Close first would wait forever): the commit's errors are read after.
	if err := om.Close(); err != nil {
		t.Fatalf("close offset manager: %v", err)
	}
	for err := range pom.Errors() {
		t.Errorf("commit %s/0: %v", topic, err)
	}
}

// TestKafkaNodeRewindIsFlagged keeps the kafka-node 2.6.1 fault of docs/legacy-clients.md as a
// test of what zk2kafka does with it: against a Kafka 3.x broker, a fetch holding more than one
// record batch makes 2.6.1 deliver the log, then its first records again, and commit the rewound
// position. The offset it leaves is a valid number far below the log end, just written: plan must
// flag it as suspect (and still decide it by the policy, not block it).
func TestKafkaNodeRewindIsFlagged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.st.Profile != "zk" {
		t.Skipf("legacy clients need a ZooKeeper-mode broker (the zk profile); the stack is %s", e.st.Profile)
	}
	const k, n = 7, 400 // k records when the client runs (as in docs/legacy-clients.md), n once it stopped
	topic := e.topic(0)
	e.produce(topic, 0, 1) // two produce requests: two record batches
	e.produce(topic, 1, k)
	g := e.group()
	znode := fmt.Sprintf("%s/consumers/%s", brokerChroot, g)
	t.Cleanup(func() {
		if err := deleteTree(e.raw, znode); err != nil {
			t.Errorf("delete %s: %v", znode, err)
		}
	})
	dir := installLegacyClient(t, "kafka-node-2.6.1")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	zkURL := e.st.ZK + brokerChroot
	out, err := kafkaNode(ctx, dir, zkURL, e.st.Kafka, topic, g, k).CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-node 2.6.1: %v\n%s", err, out)
	}
	stored := readLegacyOffset(t, e, fmt.Sprintf("%s/offsets/%s/0", znode, topic))
	if stored >= k {
		t.Fatalf("kafka-node 2.6.1 stored %d after consuming %d records in two batches: the rewind this test is about "+
			"did not happen (docs/legacy-clients.md describes it)\n%s", stored, k, out)
	}
	waitNoLegacyMembers(t, e, znode+"/ids")
	e.produce(topic, k, n) // the topic goes on: the rewound offset falls far behind its end
	doc := decodeJSON[planDoc](t, e.cliAt(zkURL, "migrate", "plan", "--group", g, "-o", "json"))
	es := doc.groupPlan(t, g).Entries
	if len(es) != 1 || es[0].Suspect == "" || es[0].Action != migrate.ActionWrite || doc.Summary.Suspect != 1 {
		t.Fatalf("kafka-node 2.6.1 stored %d of a %d-record log: plan entries %+v, summary %+v; want it flagged suspect, action write",
			stored, n, es, doc.Summary)
	}
	t.Logf("kafka-node 2.6.1 stored %d; plan: %s", stored, es[0].Suspect)
}
