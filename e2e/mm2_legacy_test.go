package e2e_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestMirrorMakerLegacyConsumer is the issue's own proof with a real legacy consumer: Kafka
// 1.1.1's Scala consumer reads part of a source topic whose replication into the target did
// not start at offset 0 and commits to ZooKeeper; zk2kafka migrates the group into the target
// (through its SASL_SSL listener); a current consumer of the group on the target then reads
// every record the legacy consumer had not consumed, each once after at most the records plan
// announced it may read again, and nothing the legacy consumer had consumed beyond those.
func TestMirrorMakerLegacyConsumer(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	const records, start = 200, 60
	topic := e.unreplicatedStart([]int{records}, []int64{start})
	target := st.MM2SourceAlias + "." + topic
	syncs := e.waitSyncs(topic, []int{records})
	// The consumer reads k records from the log start: its ZooKeeper offset is start+k, at an
	// offset the syncs place (see TestMirrorMakerMigrate on backlogs MirrorMaker 2 replicated
	// without syncs).
	k := int64(80)
	if first := firstTranslated(t, syncs, topic, 0, start, records, st.MM2OffsetLagMax); first > start+k {
		k = first - start
	}
	zkURL := st.ZK + brokerChroot
	g := e.group()
	znode := fmt.Sprintf("%s/consumers/%s", brokerChroot, g)
	t.Cleanup(func() {
		if err := deleteTree(e.raw, znode); err != nil {
			t.Errorf("delete %s: %v", znode, err)
		}
	})
	dir := installLegacyClient(t, "scala-1.1.1")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	out, err := scalaConsumer(ctx, dir, zkURL, st.Kafka, topic, g, int(k)).CombinedOutput()
	t.Logf("scala-1.1.1:\n%s", out)
	if err != nil {
		t.Fatalf("scala-1.1.1: %v", err)
	}
	zkOff := readLegacyOffset(t, e, fmt.Sprintf("%s/offsets/%s/0", znode, topic))
	if zkOff != start+k {
		t.Fatalf("the Scala consumer stored %d after reading %d records from %d, want %d", zkOff, k, start, start+k)
	}
	waitNoLegacyMembers(t, e, znode+"/ids")

	planFile := e.file("plan.json")
	r := e.cliAt(zkURL, append([]string{"migrate", "plan", "--group", g, "-o", "json", "--out", planFile}, mm2Args(st)...)...)
	if r.code != 0 {
		t.Fatalf("plan: %s", r)
	}
	plan := decodeJSON[planDoc](t, r).groupPlan(t, g)
	if len(plan.Entries) != 1 || plan.Entries[0].Source == nil || plan.Entries[0].Source.Offset != zkOff {
		t.Fatalf("plan: want one entry translated from %s/0 at %d:\n%s", topic, zkOff, r)
	}
	announced := plan.Entries[0].Source.MaxReread
	e.deleteTargetGroupAtEnd(g)
	if r := e.cliAt(zkURL, append([]string{"migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup.jsonl")}, mm2Args(st)...)...); r.code != 0 {
		t.Fatalf("copy: %s", r)
	}
	if r := e.cliAt(zkURL, append([]string{"migrate", "verify", "--group", g, "--strict"}, mm2Args(st)...)...); r.code != 0 {
		t.Errorf("verify --strict: %s", r)
	}

	tc := e.targetClient()
	got := e.consumeTargetAsSource(tc, g, target, 1)[0]
	reread, err := checkRead(got, zkOff, records)
	if err != nil {
		t.Fatalf("%s/0: the current consumer after the Scala consumer's %d: %v (read source records %v)", target, zkOff, err, got)
	}
	if reread > announced {
		t.Errorf("%s/0: %d records read again, more than the %d plan announced", target, reread, announced)
	}
	t.Logf("%s/0: the Scala consumer read %d..%d and stored %d; the target's consumer read %d records, %d of them again (plan announced at most %d)",
		target, start, zkOff-1, zkOff, len(got), reread, announced)
}
