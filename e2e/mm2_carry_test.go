package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestMirrorMakerCarriesCopiedOffsets is the other path into a MirrorMaker 2 target: today's
// copy into the source cluster's __consumer_offsets, MirrorMaker 2 (sync.group.offsets.enabled
// on the mm2 stack) carries the group across, and verify --target-kafka compares the target
// with ZooKeeper through the same translation. A consumer on the target then reads every
// record the legacy consumer had not consumed.
func TestMirrorMakerCarriesCopiedOffsets(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	records, starts := []int{200, 80}, []int64{50, 10}
	topic := e.unreplicatedStart(records, starts)
	target := st.MM2SourceAlias + "." + topic
	syncs := e.waitSyncs(topic, records)
	zkOffs := map[int32]int64{0: 170, 1: 80}
	for p, want := range zkOffs {
		if first := firstTranslated(t, syncs, topic, p, starts[p], int64(records[p]), st.MM2OffsetLagMax); first > want {
			zkOffs[p] = first
		}
	}
	g := e.group()
	e.deleteTargetGroupAtEnd(g)
	e.zkOffsets(g, topic, zkOffs)

	// Today's copy, into the source: no target flag.
	e.mustCLI(0, "migrate", "copy", "--group", g, "--execute", "--backup", e.file("backup.jsonl"))
	args := append([]string{"migrate", "verify", "--group", g, "-o", "json"}, mm2Args(st)...)
	deadline := time.Now().Add(replicationWait)
	var r result
	for {
		r = e.cli(args...)
		if r.code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second) // MirrorMaker 2 checkpoints and syncs groups every 5 s
	}
	if r.code != 0 {
		t.Fatalf("verify --target-kafka: the target never matched ZooKeeper within %s:\n%s", replicationWait, r)
	}
	// MirrorMaker 2 translates with fewer syncs than the topic holds at times, and its commit
	// then lies behind zk2kafka's translation (kafka-behind: records read again, none skipped,
	// which passes); the consumer below checks that nothing is skipped either way.
	if n := strings.Count(r.stdout, `"ok": true`); n != len(records) {
		t.Fatalf("verify: %d partitions pass, want %d:\n%s", n, len(records), r)
	}
	t.Logf("verify: %d match, %d kafka-behind", strings.Count(r.stdout, `"status": "match"`), strings.Count(r.stdout, `"status": "kafka-behind"`))
	tc := e.targetClient()
	read := e.consumeTargetAsSource(tc, g, target, len(records))
	for p, n := range records {
		part := int32(p)
		got := read[part]
		reread, err := checkRead(got, zkOffs[part], int64(n))
		if err != nil {
			t.Errorf("%s/%d: resumed from MirrorMaker 2's commit for ZooKeeper %d: %v", target, p, zkOffs[part], err)
		}
		t.Logf("%s/%d: ZooKeeper %d carried by MirrorMaker 2; %d records read, %d of them again", target, p, zkOffs[part], len(got), reread)
	}
}
