package e2e_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestCopyResumesAfterInterruption stops the real executor after its first batch (one group)
// and then runs the CLI on the same saved plan: our own earlier writes are not drift, the
// written group is found already equal, and the copy completes with every offset equal to
// ZooKeeper's.
func TestCopyResumesAfterInterruption(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	zkOffsets := map[string]map[int32]int64{}
	for i := range int64(3) {
		g := e.group()
		zkOffsets[g] = map[int32]int64{0: 1 + i, 1: 5 + i}
		e.zkOffsets(g, topic, zkOffsets[g])
	}
	file := e.savePlan()
	saved, err := migratetest.ReadPlanFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first := saved.Groups[0].Group

	ctx, cancel := context.WithCancel(e.ctx())
	defer cancel()
	var progress []int
	c := &copier.Copier{Legacy: e.zr, Kafka: e.kw, Committer: e.kw, Backup: e.backup(saved.Fingerprint), BatchGroups: 1,
		Progress: func(done int) { progress = append(progress, done); cancel() }}
	res, err := migratetest.RunCopier(ctx, c, saved, true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: error %v, want context.Canceled", err)
	}
	if !slices.Equal(progress, []int{2}) || len(res.Groups) != 1 || res.Groups[0].Group != first ||
		res.Counts()[copier.StatusWritten] != 2 {
		t.Fatalf("interrupted copy: progress %v, result %+v; want group %s's 2 partitions written and nothing more", progress, res, first)
	}
	for g, offsets := range zkOffsets {
		w := map[string]int64{}
		if g == first {
			w = want(topic, offsets)
		}
		if got := e.offsets(g); !maps.Equal(got, w) {
			t.Fatalf("after the interruption group %s holds %v, want %v", g, got, w)
		}
	}

	// The stores differ from the plan only by the copy's own writes: that is no drift.
	f, err := migrate.NewFilterFromSpec(saved.Filter)
	if err != nil {
		t.Fatal(err)
	}
	in, err := migrate.ReadInputs(e.ctx(), e.zr, e.kw, f)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := migratetest.Build(in, saved.Policy, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Fingerprint == saved.Fingerprint {
		t.Fatal("the fingerprint did not change after a partial copy: the resume path is not exercised")
	}
	if d := migratetest.Drift(saved, fresh); len(d) != 0 {
		t.Fatalf("drift after our own partial copy: %q", d)
	}

	r := e.mustCLI(0, "migrate", "copy", "--plan", file, "--execute", "--backup", e.file("backup"), "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if n := doc.Counts; n[copier.StatusAlready] != 2 || n[copier.StatusWritten] != 4 || len(n) != 2 {
		t.Errorf("resumed copy: counts %v, want 2 already and 4 written\n%s", n, r)
	}
	if strings.Contains(r.stderr, "changed since") {
		t.Errorf("resumed copy reported drift\n%s", r)
	}
	for g, offsets := range zkOffsets {
		if got, w := e.st.DescribeOffsets(t, g), want(topic, offsets); !maps.Equal(got, w) {
			t.Errorf("consumer-groups --describe %s: %v, want the ZooKeeper offsets %v", g, got, w)
		}
	}
}

// TestCopyBackupHoldsPreviousOffsets checks that the backup of `copy --execute --backup F`
// holds, for each overwritten partition and only those, the Kafka offset before the copy.
func TestCopyBackupHoldsPreviousOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10, 10, 10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 5, 1: 6, 2: 7, 3: 2})
	// 0 and 1 zk-ahead, 2 zk-only (no commit), 3 kafka-ahead: kept, so not in the backup.
	e.kafkaCommit(g, topic, "e2e", map[int32]int64{0: 1, 1: 4, 3: 8})
	backup := e.file("backup")
	r := e.mustCLI(0, "migrate", "copy", "--execute", "--on-conflict=max", "--backup", backup, "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if n := doc.Counts[copier.StatusWritten]; n != 3 {
		t.Fatalf("copy wrote %d, want 3\n%s", n, r)
	}
	h, recs := readBackup(t, backup)
	if h.Fingerprint != doc.Fingerprint {
		t.Errorf("backup header fingerprint %q, copy's plan %q", h.Fingerprint, doc.Fingerprint)
	}
	one, four := int64(1), int64(4)
	wantRecs := map[int32]copier.BackupRecord{
		0: {Group: g, Topic: topic, Partition: 0, KafkaBefore: &one, Target: 5},
		1: {Group: g, Topic: topic, Partition: 1, KafkaBefore: &four, Target: 6},
		2: {Group: g, Topic: topic, Partition: 2, KafkaBefore: nil, Target: 7},
	}
	if len(recs) != len(wantRecs) {
		t.Errorf("backup has %d records, want %d: %+v", len(recs), len(wantRecs), recs)
	}
	for _, rec := range recs {
		w, ok := wantRecs[rec.Partition]
		if !ok || rec.Group != w.Group || rec.Topic != w.Topic || rec.Target != w.Target ||
			offsetOr(rec.KafkaBefore, -1) != offsetOr(w.KafkaBefore, -1) {
			t.Errorf("backup record %+v (before %d), want %+v (before %d)", rec, offsetOr(rec.KafkaBefore, -1), w, offsetOr(w.KafkaBefore, -1))
		}
	}
	if got, w := e.offsets(g), want(topic, map[int32]int64{0: 5, 1: 6, 2: 7, 3: 8}); !maps.Equal(got, w) {
		t.Errorf("after the copy kafka holds %v, want %v", got, w)
	}
}

// TestCopyRefusesDrift saves a plan, changes the stores, and checks that copy of the saved
// plan exits 2 before writing anything: no Kafka commit, not even a backup file.
func TestCopyRefusesDrift(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(e *env, g, other, topic string)
		kafka  map[int32]int64 // what Kafka must hold for g afterwards
	}{
		{"zookeeper offset moved", func(e *env, g, _, topic string) { e.zkOffsets(g, topic, map[int32]int64{0: 5}) }, nil},
		{"kafka commit appeared", func(e *env, g, _, topic string) {
			e.kafkaCommit(g, topic, "other", map[int32]int64{1: 2})
		}, map[int32]int64{1: 2}},
		{"new group", func(e *env, _, other, topic string) { e.zkOffsets(other, topic, map[int32]int64{0: 1}) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			topic := e.topic(10, 10)
			g := e.group()
			e.zkOffsets(g, topic, map[int32]int64{0: 3, 1: 4})
			plan := e.savePlan()
			other := e.group() // in ZooKeeper only if the case puts it there
			c.change(e, g, other, topic)
			backup := e.file("backup")
			r := e.mustCLI(2, "migrate", "copy", "--plan", plan, "--execute", "--backup", backup)
			if !strings.Contains(r.stderr, "changed since plan") || !strings.Contains(r.stderr, "nothing was written") {
				t.Errorf("want a drift refusal\n%s", r)
			}
			if _, err := os.Stat(backup); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("backup file %s: %v, want none created", backup, err)
			}
			if got, w := e.offsets(g), want(topic, c.kafka); !maps.Equal(got, w) {
				t.Errorf("group %s: kafka holds %v, want %v", g, got, w)
			}
			if got := e.offsets(other); len(got) != 0 {
				t.Errorf("group %s: kafka holds %v, want nothing", other, got)
			}
		})
	}
}
