package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mm2"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// TestMirrorMakerCheckpointAfterCompaction: a legacy consumer that also committed to the source
// cluster (as the Scala consumer's dual.commit.enabled does) is checkpointed by MirrorMaker 2;
// then the offset-syncs topic is compacted, and the syncs that placed its offset are gone: the
// offset lies below the first sync left. zk2kafka places it from the group's checkpoint, and a
// consumer on the target reads every record the legacy consumer had not read, re-reading at
// most what plan announced. The test runs a replication of its own (its own aliases, topics and
// offset-syncs topic, made with segments that roll at once so the cleaner compacts it within
// the test), so that the stack's shared syncs are never compacted under other tests.
func TestMirrorMakerCheckpointAfterCompaction(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	srcAlias, tgtAlias := "cpsrc", "cptgt"
	topic := e.namedTopic("cpt-"+stacktest.Name(t, "t"), 200)
	e.raiseLogStart(topic, 0, 40)
	syncsTopic := mm2log.Topic(tgtAlias)
	e.deleteTopicAtEnd(syncsTopic)
	e.createCompactingTopic(syncsTopic)

	const zkOff = 120
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: zkOff})
	// The consumer's commit in the source cluster, which MirrorMaker 2 checkpoints.
	e.mustCLI(0, "migrate", "copy", "--group", g, "--execute", "--backup", e.file("backup.jsonl"))

	e.runMirrorMaker(srcAlias, tgtAlias, `cpt-.*`)
	target := srcAlias + "." + topic
	cp := e.waitCheckpoint(mm2log.CheckpointsTopic(srcAlias, "."), g, target, zkOff)
	t.Logf("MirrorMaker 2 checkpointed %s at source %d, target %d", g, cp.Upstream, cp.Downstream)

	// More records, in rounds a second apart: MirrorMaker 2 syncs them into new segments, and
	// the cleaner compacts the old ones to their last sync.
	for round := range 3 {
		e.produceFrom(topic, 200+int64(round)*30, 30)
		time.Sleep(1500 * time.Millisecond)
	}
	first := e.waitSyncsCompactedAbove(syncsTopic, topic, zkOff)
	t.Logf("offset syncs compacted: the first left is source %d at target %d", first.Upstream, first.Downstream)

	// Through the target's SASL_SSL listener, with the target's TLS and SASL flags.
	args := []string{"--target-kafka", st.KafkaTargetSASL, "--target-kafka-tls", "--target-kafka-tls-ca-file", st.KafkaTargetCAFile,
		"--target-kafka-sasl-mechanism", "SCRAM-SHA-512", "--target-kafka-sasl-user", st.KafkaTargetUser,
		"--target-kafka-sasl-password-file", st.KafkaTargetPasswordFile,
		"--mm2-source-alias", srcAlias, "--mm2-target-alias", tgtAlias, "--mm2-offset-lag-max", "10"}
	planFile := e.file("plan.json")
	r := e.mustCLI(0, append([]string{"migrate", "plan", "--group", g, "-o", "json", "--out", planFile}, args...)...)
	plan := decodeJSON[planDoc](t, r).groupPlan(t, g)
	if len(plan.Entries) != 1 || plan.Entries[0].Action != migrate.ActionWrite || plan.Entries[0].Source == nil ||
		plan.Entries[0].Target != cp.Downstream {
		t.Fatalf("plan: want one write at the checkpoint's target offset %d:\n%s", cp.Downstream, r)
	}
	announced := plan.Entries[0].Source.MaxReread
	e.deleteTargetGroupAtEnd(g)
	e.mustCLI(0, append([]string{"migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup2.jsonl")}, args...)...)

	tc := e.targetClient()
	end := int64(200 + 3*30)
	e.waitTargetEnd(tc, target, 0, end-40)
	got := e.consumeTargetAsSource(tc, g, target, 1)[0]
	reread, err := checkRead(got, zkOff, end)
	if err != nil {
		t.Fatalf("%s/0: resumed from the checkpoint for ZooKeeper %d: %v (read %v)", target, zkOff, err, got)
	}
	if reread > announced {
		t.Errorf("%s/0: %d records read again, more than the %d plan announced", target, reread, announced)
	}
	t.Logf("%s/0: ZooKeeper %d placed at %d from the checkpoint; %d records read, %d again (announced at most %d)", target, zkOff, cp.Downstream, len(got), reread, announced)
}

// createCompactingTopic makes a one-partition compacted topic whose segments roll within a
// second and are compacted as soon as the cleaner looks.
func (e *env) createCompactingTopic(name string) {
	e.t.Helper()
	conf := func(v string) *string { return &v }
	err := e.admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1, ConfigEntries: map[string]*string{
		"cleanup.policy": conf("compact"), "segment.ms": conf("500"), "min.cleanable.dirty.ratio": conf("0.01"),
		"min.compaction.lag.ms": conf("0")}}, false)
	if err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
}

// waitCheckpoint waits until MirrorMaker 2 checkpointed group's offset up of the target
// topic's partition 0, and returns the checkpoint.
func (e *env) waitCheckpoint(topic, group, target string, up int64) mm2.Checkpoint {
	e.t.Helper()
	r := e.targetReader()
	deadline := time.Now().Add(replicationWait)
	var last string
	for {
		got, err := r.ReadCheckpoints(e.ctx(), mm2log.Checkpoints{Topic: topic})
		if err == nil {
			if c, ok := got.Latest[mm2log.CheckpointKey{Group: group, TP: migrate.TopicPartition{Topic: target}}]; ok && c.Upstream == up {
				return c
			}
			last = fmt.Sprintf("%d checkpoints, none of %s at %d", len(got.Latest), group, up)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no checkpoint of %s in %s within %s: %s", group, topic, replicationWait, last)
		}
		time.Sleep(time.Second)
	}
}

// waitSyncsCompactedAbove waits until the first offset sync left of topic's partition 0 in
// syncsTopic (on the source) is above off, and returns it.
func (e *env) waitSyncsCompactedAbove(syncsTopic, topic string, off int64) mm2.OffsetSync {
	e.t.Helper()
	r := e.mm2Reader(e.st.Kafka, "source")
	// The cleaner looks every 15 s (log.cleaner.backoff.ms) once a segment has rolled.
	deadline := time.Now().Add(replicationWait)
	var last string
	for {
		got, err := r.Read(e.ctx(), syncsTopic)
		if err != nil {
			e.t.Fatal(err)
		}
		s := got.Syncs[migrate.TopicPartition{Topic: topic}]
		if up, down, ok := s.First(); ok && up > off {
			return mm2.OffsetSync{Topic: topic, Upstream: up, Downstream: down}
		} else if ok {
			last = fmt.Sprintf("%d syncs from source %d", s.Len(), up)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("offset syncs of %s in %s not compacted above %d within %s: %s", topic, syncsTopic, off, replicationWait, last)
		}
		time.Sleep(2 * time.Second)
	}
}
