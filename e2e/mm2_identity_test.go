package e2e_test

import (
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// TestMirrorMakerIdentityPolicy: the replication settings the stack's MirrorMaker 2 does not
// have, on a MirrorMaker 2 of the test's own: the identity policy (the target's topic keeps the
// source's name), the offset syncs on the target (offset-syncs.topic.location=target), and a
// separator of its own ("_", which names MirrorMaker 2's internal topics since KIP-690). On
// the target the offset-syncs topic is named after the source's alias, not the target's. A
// group's ZooKeeper offset migrates into the target with the matching flags, verify --strict
// passes, and its consumer there reads every record not yet consumed, re-reading at most what
// plan announced.
func TestMirrorMakerIdentityPolicy(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	const records, start = 150, 30
	topic := e.namedTopic("idp-"+stacktest.Name(t, "t"), records)
	e.raiseLogStart(topic, 0, start) // before MirrorMaker 2 runs: replication starts past it
	srcAlias, tgtAlias := "idsrc", "idtgt"
	e.runMirrorMaker(srcAlias, tgtAlias, `idp-.*`,
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"replication.policy.separator = _", "offset-syncs.topic.location = target")
	tc := e.targetClient()
	e.waitTargetEnd(tc, topic, 0, records-start)
	// On the target, MirrorMaker 2 names the topic after the source's alias.
	syncsTopic := mm2log.TopicSeparated(srcAlias, "_")
	syncs := e.waitSyncsIn(e.targetReader(), syncsTopic, topic, []int{records}, 10)

	zkOff := int64(100)
	zkOff = max(zkOff, firstTranslated(t, syncs, topic, 0, start, records, 10))
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: zkOff})
	args := []string{"--target-kafka", st.KafkaTargetSASL, "--target-command-config", st.KafkaTargetClientProperties,
		"--mm2-source-alias", srcAlias, "--mm2-target-alias", tgtAlias, "--replication-policy", "identity", "--replication-policy-separator", "_",
		"--mm2-offset-syncs-location", "target", "--mm2-offset-lag-max", "10"}
	planFile := e.file("plan.json")
	r := e.mustCLI(0, append([]string{"migrate", "plan", "--group", g, "-o", "json", "--out", planFile}, args...)...)
	plan := decodeJSON[planDoc](t, r).groupPlan(t, g)
	if len(plan.Entries) != 1 || plan.Entries[0].Topic != topic || plan.Entries[0].Source == nil ||
		plan.Entries[0].Source.Topic != topic || plan.Entries[0].Action != migrate.ActionWrite {
		t.Fatalf("plan: want one write into %s of the target from %s of the source:\n%s", topic, topic, r)
	}
	announced := plan.Entries[0].Source.MaxReread
	e.deleteTargetGroupAtEnd(g)
	e.mustCLI(0, append([]string{"migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup.jsonl")}, args...)...)
	e.mustCLI(0, append([]string{"migrate", "verify", "--group", g, "--strict"}, args...)...)

	got := e.consumeTargetAsSource(tc, g, topic, 1)[0]
	reread, err := checkRead(got, zkOff, records)
	if err != nil {
		t.Fatalf("%s/0 in the target: resumed for ZooKeeper %d: %v (read %v)", topic, zkOff, err, got)
	}
	if reread > announced {
		t.Errorf("%s/0: %d records read again, more than the %d plan announced", topic, reread, announced)
	}
	t.Logf("%s/0 (identity policy, syncs on the target in %s): ZooKeeper %d; %d records read, %d again (announced at most %d)",
		topic, syncsTopic, zkOff, len(got), reread, announced)
}
