package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestBrokerVersionMigration is the migration a legacy cluster's operator runs, on whichever
// broker the stack has: scripts/test runs it on every release of its profiles (the zk profile's
// 3.9, kraft's 4.x, kafka28's 2.8.2, kafka21's 2.1.1, kafka20's 2.0.1, kafka11's 1.1.1, kafka011's
// 0.11.0.3 and kafka0102's 0.10.2.2, the oldest the tool speaks). Every verb: plan, copy --execute, verify, verify
// --via-topic (which decodes that release's __consumer_offsets records itself: on kafka0102
// gzip-compressed magic-1 message sets), export from both stores, restore into Kafka, and
// dual-commit mirroring a change; Kafka's own consumer-groups tool of the same release is the
// checker. A group Kafka holds ahead of ZooKeeper stays where it is: the copy re-reads Kafka's
// commit before writing, which needs no leader epoch (commits carry none before Kafka 2.1).
func TestBrokerVersionMigration(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(10, 10, 10)
	g, ahead, restored := e.group(), e.group(), e.group()
	offsets := map[int32]int64{0: 2, 1: 6, 2: 10}
	e.zkOffsets(g, topic, offsets)
	e.zkOffsets(ahead, topic, map[int32]int64{0: 3})
	e.zkOffsets(restored, topic, map[int32]int64{1: 4, 2: 9})
	if _, err := e.kw.Commit(e.ctx(), ahead, []migrate.Commit{{TopicPartition: tp(topic, 0), Offset: 7}}); err != nil {
		t.Fatalf("commit %s ahead in Kafka: %v", ahead, err)
	}

	plan := e.file("plan")
	e.mustCLI(0, "migrate", "plan", "--group", g, "--group", ahead, "--out", plan)
	e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup"))
	e.mustCLI(0, "migrate", "verify", "--group", g)
	e.mustCLI(0, "migrate", "verify", "--group", g, "--via-topic")
	if got, w := e.st.DescribeOffsets(t, g), want(topic, offsets); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s (%s): %v, want %v", g, e.st.Profile, got, w)
	}
	if got, w := e.st.DescribeOffsets(t, ahead), want(topic, map[int32]int64{0: 7}); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s (%s): %v, want %v: Kafka's own 7 kept over ZooKeeper's 3", ahead, e.st.Profile, got, w)
	}

	// export / restore: ZooKeeper's offsets of one group into Kafka, and Kafka's back out.
	zkFile, kafkaFile := e.file("zk")+".json", e.file("kafka")+".json"
	e.mustCLI(0, "export", "--group", restored, "--file", zkFile)
	e.mustCLI(0, "restore", "--to", "kafka", "--file", zkFile, "--execute", "--backup", e.file("restore-backup"))
	if got, w := e.st.DescribeOffsets(t, restored), want(topic, map[int32]int64{1: 4, 2: 9}); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s after restore (%s): %v, want %v", restored, e.st.Profile, got, w)
	}
	e.mustCLI(0, "export", "--from", "kafka", "--group", g, "--group", restored, "--file", kafkaFile)
	_, exported := readExport(t, kafkaFile)
	wantExport := map[migrate.Key]int64{}
	for p, off := range offsets {
		wantExport[migrate.Key{Group: g, Topic: topic, Partition: p}] = off
	}
	wantExport[migrate.Key{Group: restored, Topic: topic, Partition: 1}] = 4
	wantExport[migrate.Key{Group: restored, Topic: topic, Partition: 2}] = 9
	if !maps.Equal(exported, wantExport) {
		t.Fatalf("export --from kafka (%s): %v, want %v", e.st.Profile, exported, wantExport)
	}
	e.mustCLI(0, "migrate", "verify", "--group", restored, "--via-topic")

	args := []string{"--group", g, "--execute"}
	if strings.HasPrefix(e.st.KafkaRelease, "0.10.") {
		// No DescribeConfigs before 0.11: the broker cannot tell its offsets retention, and
		// dual-commit will not guess the keep-alive.
		r := e.mustCLI(1, "migrate", "dual-commit", "--group", g, "--execute")
		if !strings.Contains(r.stderr, "offsets.retention.minutes") {
			t.Fatalf("dual-commit without --keepalive-interval on %s: %s", e.st.KafkaRelease, r)
		}
		args = append(args, "--keepalive-interval", "1h")
	}
	run := e.dualCommit(args...)
	e.zkOffsets(g, topic, map[int32]int64{1: 8})
	waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", e.offsets(g), run.stderr) }, func() bool { return e.offsets(g)[topic+"/1"] == 8 })
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit: exit %d\n%s", code, run.stderr)
	}
}

// scalaConsumers is the Scala high-level consumer (scripts/legacy-clients) of each stack
// release that shipped one: the consumer of the broker's own release, against it.
var scalaConsumers = map[string]string{"kafka11": "scala-1.1.1", "kafka0102": "scala-0.10.2.2"}

// TestBrokerVersionLegacyConsumer is the cutover on a legacy cluster with its own release's
// Scala consumer: the consumer reads k records and commits them to ZooKeeper (the broker's
// chroot, as it was deployed), stops; copy runs at the cutover; then a current Kafka consumer
// of the group starts at record k and reads every later record once: nothing lost or repeated.
func TestBrokerVersionLegacyConsumer(t *testing.T) {
	e := newEnv(t)
	name, ok := scalaConsumers[e.st.Profile]
	if !ok {
		t.Skipf("no Scala consumer runs on the %s stack: kafka11 and kafka0102 run their release's (it left Kafka in 2.0)", e.st.Profile)
	}
	const k, n = 7, 12 // k records when the legacy consumer runs, n after the copy
	zkURL := e.st.ZK + brokerChroot
	topic, g, znode := legacyGroup(t, e, k)
	dir := installLegacyClient(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	out, err := scalaConsumer(ctx, dir, zkURL, "", topic, g, k).CombinedOutput()
	t.Logf("%s:\n%s", name, out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if stored := readLegacyOffset(t, e, fmt.Sprintf("%s/offsets/%s/0", znode, topic)); stored != k {
		t.Fatalf("%s stored %d after consuming %d records, want %d (the next offset)", name, stored, k, k)
	}
	waitNoLegacyMembers(t, e, znode+"/ids")

	e.produce(topic, k, n)
	if r := e.cliAt(zkURL, "migrate", "copy", "--group", g, "--execute", "--backup", e.file("backup")); r.code != 0 {
		t.Fatalf("migrate copy --group %s: %s", g, r)
	}
	if r := e.cliAt(zkURL, "migrate", "verify", "--group", g, "--strict"); r.code != 0 {
		t.Fatalf("migrate verify --group %s --strict: %s", g, r)
	}
	if got, w := e.st.DescribeOffsets(t, g), want(topic, map[int32]int64{0: k}); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s (%s): %v, want %v", g, e.st.KafkaRelease, got, w)
	}

	expectResume(t, e, "after "+name, topic, g, k, n)
}
