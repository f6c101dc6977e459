package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/IBM/sarama"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/verify"
)

// TestGroupMapCopyVerify renames a legacy group on its way into Kafka: plan records the map,
// copy --plan writes the old group's ZooKeeper offsets into the new Kafka group (checked with
// Kafka's own OffsetFetch: the new group holds them, the old Kafka group nothing), verify under
// the map passes and names both groups, and verify without it fails (the old Kafka group is
// empty): verify does follow the map.
func TestGroupMapCopyVerify(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	old, renamed := e.group(), e.group()
	e.zkOffsets(old, topic, map[int32]int64{0: 4, 1: 6})
	mapArg := old + "=" + renamed

	plan := e.file("plan") + ".json"
	e.mustCLI(0, "migrate", "plan", "--group", old, "--group-map", mapArg, "--out", plan)
	saved, err := migratetest.ReadPlanFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Groups) != 1 || saved.Groups[0].Group != old || saved.Groups[0].KafkaGroup != renamed ||
		saved.Filter.KafkaGroup(old) != renamed {
		t.Fatalf("plan file: filter %+v, groups %+v", saved.Filter, saved.Groups)
	}
	// A saved plan carries its map: copy takes none of its own.
	r := e.cli("migrate", "copy", "--plan", plan, "--group-map", old+"=elsewhere")
	if r.code == 0 || !strings.Contains(r.stderr, "carries its own selection, group map and policy") {
		t.Fatalf("copy --plan with --group-map: %s", r)
	}

	r = e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup"), "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if doc.Counts[copier.StatusWritten] != 2 || len(doc.Result.Groups) != 1 || doc.Result.Groups[0].KafkaGroup != renamed {
		t.Fatalf("copy: %+v\n%s", doc, r)
	}
	if got, w := e.offsets(renamed), want(topic, map[int32]int64{0: 4, 1: 6}); !maps.Equal(got, w) {
		t.Fatalf("OffsetFetch of the new group %s: %v, want %v", renamed, got, w)
	}
	if got := e.offsets(old); len(got) != 0 {
		t.Fatalf("OffsetFetch of the old Kafka group %s: %v, want nothing", old, got)
	}

	rep := decodeJSON[verify.Report](t, e.mustCLI(0, "migrate", "verify", "--group", old, "--group-map", mapArg, "-o", "json"))
	if !rep.Pass || len(rep.Groups) != 1 || rep.Groups[0].Group != old || rep.Groups[0].KafkaGroup != renamed {
		t.Fatalf("verify under the map: %+v", rep)
	}
	// The old Kafka group holds nothing: without the map, every partition is missing in Kafka.
	rep = decodeJSON[verify.Report](t, e.mustCLI(2, "migrate", "verify", "--group", old, "-o", "json"))
	if rep.Pass || rep.Summary.ByStatus[verify.StatusMissingInKafka] != 2 {
		t.Fatalf("verify without the map: %+v", rep.Summary)
	}
}

// TestGroupMapGates: the gates of a renamed group read the old group's liveness in ZooKeeper
// and the new group's state in Kafka. A live legacy consumer registered under the old group
// blocks it, and so does an active member of the new Kafka group; each time nothing is written.
func TestGroupMapGates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10)
	old, renamed := e.group(), e.group()
	e.zkOffsets(old, topic, map[int32]int64{0: 3})
	args := []string{"--group", old, "--group-map", old + "=" + renamed}

	unregister, err := e.zr.RegisterLiveConsumer(e.ctx(), old, old+"_legacy-1", []migrate.TopicPartition{tp(topic, 0)})
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON[planDoc](t, e.mustCLI(2, append([]string{"migrate", "plan", "-o", "json"}, args...)...))
	if g := doc.groupPlan(t, old); !slices.Equal(g.Gates, []migrate.Gate{migrate.GateLegacyConsumersAlive}) || g.KafkaGroup != renamed {
		t.Fatalf("plan with a live legacy consumer of %s: %+v", old, g)
	}
	e.mustCLI(2, append([]string{"migrate", "copy", "--execute", "--backup", e.file("backup-live")}, args...)...)
	if got := e.offsets(renamed); len(got) != 0 {
		t.Fatalf("copy wrote %v into %s while a legacy consumer of %s was live", got, renamed, old)
	}
	if err := unregister(); err != nil {
		t.Fatal(err)
	}

	// An active member of the new group: kafka-group-active, read from the new group.
	m := e.join(renamed, []string{topic}, idleMember{})
	doc = decodeJSON[planDoc](t, e.mustCLI(2, append([]string{"migrate", "plan", "-o", "json"}, args...)...))
	g := doc.groupPlan(t, old)
	if !slices.Equal(g.Gates, []migrate.Gate{migrate.GateKafkaGroupActive}) || g.KafkaMembers != 1 {
		t.Fatalf("plan with an active member of %s: %+v", renamed, g)
	}
	r := e.mustCLI(2, append([]string{"migrate", "copy", "--execute", "--backup", e.file("backup-active")}, args...)...)
	if !strings.Contains(r.stderr, fmt.Sprintf("Kafka group %q", renamed)) {
		t.Errorf("copy's refusal does not name the new Kafka group %s:\n%s", renamed, r)
	}
	if got := e.offsets(renamed); len(got) != 0 {
		t.Fatalf("copy wrote %v into %s while it had a member", got, renamed)
	}
	m.close()
	if got := e.offsets(old); len(got) != 0 {
		t.Fatalf("copy wrote %v into the old Kafka group %s", got, old)
	}
}

// TestGroupMapMerge: two legacy groups mapped onto one Kafka group are refused when they share a
// partition (nothing written, no backup file created), and copied into the one group when they
// do not; selecting only one of them is refused.
func TestGroupMapMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	a, b, k := e.group(), e.group(), e.group()
	e.zkOffsets(a, topic, map[int32]int64{0: 3})
	e.zkOffsets(b, topic, map[int32]int64{0: 5, 1: 2})
	args := []string{"--group-map", a + "=" + k, "--group-map", b + "=" + k}

	backup := e.file("backup-overlap")
	r := e.cli(append([]string{"migrate", "copy", "--execute", "--backup", backup}, args...)...)
	first, second := min(a, b), max(a, b) // the error names them in order
	wantErr := fmt.Sprintf("legacy groups %q and %q both land in Kafka group %q and both hold topic %q partition 0", first, second, k, topic)
	if r.code != 1 || !strings.Contains(r.stderr, wantErr) {
		t.Fatalf("overlapping merge: want exit 1 and %q, got %s", wantErr, r)
	}
	if _, err := os.Stat(backup); !os.IsNotExist(err) {
		t.Errorf("backup file %s: %v, want none (nothing was to be written)", backup, err)
	}
	for _, g := range []string{a, b, k} {
		if got := e.offsets(g); len(got) != 0 {
			t.Fatalf("overlapping merge wrote %v into Kafka group %s", got, g)
		}
	}
	r = e.cli(append([]string{"migrate", "plan"}, args...)...)
	if r.code != 1 || !strings.Contains(r.stderr, wantErr) {
		t.Fatalf("plan of an overlapping merge: %s", r)
	}

	// Disjoint now: b leaves partition 0.
	e.deleteZnode(b, topic, "0")
	r = e.cli(append([]string{"migrate", "plan", "--group", a}, args...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "select every legacy group of a merge together") {
		t.Fatalf("half a merge selected: %s", r)
	}
	e.mustCLI(0, append([]string{"migrate", "copy", "--execute", "--backup", e.file("backup-merge")}, args...)...)
	if got, w := e.offsets(k), want(topic, map[int32]int64{0: 3, 1: 2}); !maps.Equal(got, w) {
		t.Fatalf("merged group %s: %v, want %v", k, got, w)
	}
	rep := decodeJSON[verify.Report](t, e.mustCLI(0, append([]string{"migrate", "verify", "-o", "json"}, args...)...))
	if !rep.Pass || rep.Summary.Groups != 2 || rep.Summary.Partitions != 2 {
		t.Fatalf("verify of the merge: %+v", rep.Summary)
	}
}

// TestGroupMapDualCommit: dual-commit mirrors a ZooKeeper change of the old group into the new
// Kafka group, never into the old Kafka group.
func TestGroupMapDualCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(20)
	old, renamed := e.group(), e.group()
	e.zkOffsets(old, topic, map[int32]int64{0: 2})
	run := e.dualCommit("--group", old, "--group-map", old+"="+renamed, "--execute", "--poll-interval", "200ms")
	first := want(topic, map[int32]int64{0: 2})
	waitFor(t, func() string {
		return fmt.Sprintf("%s: kafka %v, want %v\n%s", renamed, e.offsets(renamed), first, run.stderr)
	},
		func() bool { return maps.Equal(e.offsets(renamed), first) })
	e.zkOffsets(old, topic, map[int32]int64{0: 7})
	moved := want(topic, map[int32]int64{0: 7})
	waitFor(t, func() string {
		return fmt.Sprintf("%s: kafka %v, want %v\n%s", renamed, e.offsets(renamed), moved, run.stderr)
	},
		func() bool { return maps.Equal(e.offsets(renamed), moved) })
	if code := run.stop(t); code != 0 {
		t.Fatalf("dual-commit exit %d\n%s", code, run.stderr)
	}
	if got := e.offsets(old); len(got) != 0 {
		t.Fatalf("dual-commit wrote %v into the old Kafka group %s", got, old)
	}
	if !strings.Contains(run.stderr.String(), "kafka_group="+renamed) {
		t.Errorf("the log does not name the Kafka group %s:\n%s", renamed, run.stderr)
	}
}

// idleMember holds its partitions without reading or committing anything: a member that only
// makes its group active.
type idleMember struct{}

func (idleMember) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (idleMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (idleMember) ConsumeClaim(sess sarama.ConsumerGroupSession, _ sarama.ConsumerGroupClaim) error {
	<-sess.Context().Done()
	return nil
}

// TestGroupMapExportRestore: a ZooKeeper export restored --to kafka --group-map lands in the new
// group; export --from kafka under the map names both groups, and restores --to zk into the old
// group's znodes (the rollback) and --to kafka into the new group (its own map, no flag).
func TestGroupMapExportRestore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(20)
	old, renamed := e.group(), e.group()
	e.zkOffsets(old, topic, map[int32]int64{0: 6})
	mapArg := old + "=" + renamed

	zkFile := e.file("zk") + ".json"
	e.mustCLI(0, "export", "--group", old, "--file", zkFile)
	e.mustCLI(0, "restore", "--to", "kafka", "--file", zkFile, "--group-map", mapArg, "--execute", "--backup", e.file("b1"))
	if got, w := e.offsets(renamed), want(topic, map[int32]int64{0: 6}); !maps.Equal(got, w) {
		t.Fatalf("restore --to kafka --group-map: %s holds %v, want %v", renamed, got, w)
	}
	if got := e.offsets(old); len(got) != 0 {
		t.Fatalf("restore wrote %v into the old Kafka group %s", got, old)
	}
	if r := e.cli("restore", "--to", "zk", "--file", zkFile, "--group-map", mapArg); r.code != 1 ||
		!strings.Contains(r.stderr, "a restore --to zk writes the file's groups under their own names") {
		t.Fatalf("restore --to zk --group-map: %s", r)
	}

	// The new consumers move on in Kafka; export it under the map.
	e.kafkaCommit(renamed, topic, "", map[int32]int64{0: 11})
	kFile := e.file("kafka") + ".json"
	e.mustCLI(0, "export", "--from", "kafka", "--group", old, "--group-map", mapArg, "--file", kFile)
	f, offsets := readExport(t, kFile)
	if k := (migrate.Key{Group: old, Topic: topic, Partition: 0}); offsets[k] != 11 || len(offsets) != 1 || f.GroupMap[old] != renamed {
		t.Fatalf("export --from kafka under the map: %v, map %v", offsets, f.GroupMap)
	}
	// Rollback: into the old group's znodes.
	e.mustCLI(0, "restore", "--to", "zk", "--file", kFile, "--execute", "--backup", e.file("zkb")+".json", "--force")
	if got, w := e.zkOffsetsOf(old), want(topic, map[int32]int64{0: 11}); !maps.Equal(got, w) {
		t.Fatalf("rollback into ZooKeeper: %s holds %v, want %v", old, got, w)
	}
	// And back into Kafka: into the new group, by the file's own map.
	e.kafkaCommit(renamed, topic, "", map[int32]int64{0: 8})
	e.mustCLI(0, "restore", "--to", "kafka", "--file", kFile, "--execute", "--backup", e.file("b2"))
	if got, w := e.offsets(renamed), want(topic, map[int32]int64{0: 11}); !maps.Equal(got, w) {
		t.Fatalf("restore of the Kafka export: %s holds %v, want %v", renamed, got, w)
	}
	if got := e.offsets(old); len(got) != 0 {
		t.Fatalf("restore wrote %v into the old Kafka group %s", got, old)
	}
}

// TestGroupMapReverseMirror: with --reverse, the new Kafka group's progress is written back
// into the old group's znodes once the legacy consumers are gone.
func TestGroupMapReverseMirror(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(20)
	old, renamed := e.group(), e.group()
	e.zkOffsets(old, topic, map[int32]int64{0: 2})
	run := e.dualCommit("--group", old, "--group-map", old+"="+renamed, "--execute", "--reverse", "--poll-interval", "200ms")
	first := want(topic, map[int32]int64{0: 2})
	waitFor(t, func() string {
		return fmt.Sprintf("%s: kafka %v, want %v\n%s", renamed, e.offsets(renamed), first, run.stderr)
	},
		func() bool { return maps.Equal(e.offsets(renamed), first) })
	// The new group's consumers take over and commit ahead.
	e.kafkaCommit(renamed, topic, "", map[int32]int64{0: 9})
	back := want(topic, map[int32]int64{0: 9})
	waitFor(t, func() string {
		return fmt.Sprintf("%s: zookeeper %v, want %v\n%s", old, e.zkOffsetsOf(old), back, run.stderr)
	},
		func() bool { return maps.Equal(e.zkOffsetsOf(old), back) })
	if code := run.stop(t); code != 0 {
		t.Fatalf("dual-commit exit %d\n%s", code, run.stderr)
	}
}
