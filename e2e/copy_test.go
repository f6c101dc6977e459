package e2e_test

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestCopyConsumerResumes seeds a legacy store like the Scala consumer left it, copies it with
// `migrate copy --plan --execute`, and checks the result twice independently: Kafka's own
// consumer-groups tool shows exactly the ZooKeeper offsets, and a real consumer-group member
// (which would start from the oldest record without a commit) starts every partition exactly
// at its ZooKeeper offset and receives every later record once.
func TestCopyConsumerResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := seed.Spec{Seed: 7, Groups: 2, Topics: 2, TopicsPerGroup: 2, Partitions: 3, Records: 20,
		GroupPrefix: stacktest.Name(t, "g"), TopicPrefix: stacktest.Name(t, "t")}
	for _, topic := range spec.WithDefaults().TopicNames() {
		e.deleteTopicAtEnd(topic)
	}
	res, err := seed.Run(e.ctx(), e.zkURL, []string{e.st.Kafka}, spec, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.Close)
	zkOffsets := map[string]map[migrate.TopicPartition]int64{} // group -> partition -> offset
	inside := 0                                                // offsets strictly inside the log
	res.Spec.Each(func(k migrate.Key, off int64) bool {
		if zkOffsets[k.Group] == nil {
			zkOffsets[k.Group] = map[migrate.TopicPartition]int64{}
			e.deleteGroupAtEnd(k.Group)
		}
		zkOffsets[k.Group][tp(k.Topic, k.Partition)] = off
		if off > 0 && off < int64(spec.Records) {
			inside++
		}
		return true
	})
	if inside == 0 {
		t.Fatalf("seed %d put no offset strictly inside the log: the consumer check would prove nothing", spec.Seed)
	}

	plan := e.savePlan()
	r := e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup"), "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if n := doc.Counts[copier.StatusWritten]; n != res.Offsets || len(doc.Counts) != 1 {
		t.Fatalf("counts %v, want %d written and nothing else\n%s", doc.Counts, res.Offsets, r)
	}

	for g, offsets := range zkOffsets {
		w := map[string]int64{}
		logEnd := map[migrate.TopicPartition]int64{}
		topics := map[string]bool{}
		for k, off := range offsets {
			w[k.String()] = off
			logEnd[k] = int64(spec.Records)
			topics[k.Topic] = true
		}
		if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, w) {
			t.Errorf("consumer-groups --describe %s: %v, want the ZooKeeper offsets %v", g, got, w)
		}

		tr := newTracker(logEnd)
		m := e.join(g, slices.Sorted(maps.Keys(topics)), tr)
		select {
		case <-tr.done:
		case <-time.After(joinTimeout):
			t.Fatalf("group %s: the member did not read every partition to its log end within %s", g, joinTimeout)
		}
		m.close()
		tr.mu.Lock()
		for k, start := range offsets {
			if got := tr.initial[k]; got != start {
				t.Errorf("group %s %s: the member started at %d, want the ZooKeeper offset %d", g, k, got, start)
			}
			var w []int64
			for o := start; o < int64(spec.Records); o++ {
				w = append(w, o)
			}
			if got := tr.got[k]; !slices.Equal(got, w) {
				t.Errorf("group %s %s: received offsets %v, want %d..%d exactly once each", g, k, got, start, spec.Records-1)
			}
		}
		tr.mu.Unlock()
	}
}

// TestCopyRefusesActiveGroup checks that a group with a live Kafka member is never clobbered:
// copy planned afresh refuses with exit 2, a plan saved while the group was empty is refused
// as drift, and even the executor run directly on that saved plan blocks at its re-check.
func TestCopyRefusesActiveGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 6, 1: 8})
	before := map[int32]int64{0: 2, 1: 3} // zk-ahead: copy would write both
	e.kafkaCommit(g, topic, "e2e", before)
	saved := e.savePlan() // the group is Empty now

	m := e.join(g, []string{topic}, idle{})
	backup := e.file("backup")
	r := e.mustCLI(2, "migrate", "copy", "--execute", "--backup", backup, "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if n := doc.PlanSummary.ByAction[migrate.ActionBlock]; n != 2 || doc.Counts[copier.StatusWritten] != 0 {
		t.Errorf("fresh copy of an active group: %d blocked, counts %v; want 2 blocked, nothing written\n%s", n, doc.Counts, r)
	}
	if _, recs := readBackup(t, backup); len(recs) != 0 {
		t.Errorf("backup holds %d records, want none (nothing was about to be written): %+v", len(recs), recs)
	}

	r = e.mustCLI(2, "migrate", "copy", "--plan", saved, "--execute", "--backup", e.file("backup"))
	if !strings.Contains(r.stderr, "changed since plan") || !strings.Contains(r.stderr, string(migrate.GateKafkaGroupActive)) {
		t.Errorf("copy of the saved plan: want a drift refusal naming %s\n%s", migrate.GateKafkaGroupActive, r)
	}

	plan, err := migratetest.ReadPlanFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	c := &copier.Copier{Legacy: e.zr, Kafka: e.kw, Committer: e.kw, Backup: e.backup(plan.Fingerprint)}
	res, err := migratetest.RunCopier(e.ctx(), c, plan, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Counts(); n[copier.StatusBlocked] != 2 || len(n) != 1 {
		t.Errorf("executor on the stale plan: %v, want 2 blocked and nothing else: %+v", n, res)
	}

	if got, w := e.st.DescribeOffsets(t, g), want(topic, before); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --describe %s: %v, want the untouched %v", g, got, w)
	}
	m.close()
}

// TestCopyRerunWritesNothing copies once, then runs the same saved plan and a fresh copy again:
// both exit 0 and write nothing. The commits are re-stamped with a sentinel metadata string
// after the first copy: a re-run that committed again would replace it.
func TestCopyRerunWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10)
	g := e.group()
	offsets := map[int32]int64{0: 4, 1: 6}
	e.zkOffsets(g, topic, offsets)
	plan := e.savePlan()
	r := e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup"), "-o", "json")
	if n := decodeJSON[copyDoc](t, r).Counts[copier.StatusWritten]; n != 2 {
		t.Fatalf("first copy wrote %d, want 2\n%s", n, r)
	}
	const sentinel = "e2e-sentinel"
	e.kafkaCommit(g, topic, sentinel, offsets)

	again := e.file("backup")
	r = e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", again)
	if !strings.Contains(r.stdout, "Copy: 0 written and read back, 0 would be written, 2 already equal") {
		t.Errorf("re-run of the saved plan: want 0 written, 2 already equal\n%s", r)
	}
	fresh := e.file("backup")
	r = e.mustCLI(0, "migrate", "copy", "--execute", "--backup", fresh, "-o", "json")
	doc := decodeJSON[copyDoc](t, r)
	if s := doc.PlanSummary; s.ByClass[migrate.ClassEqual] != 2 || s.ByAction[migrate.ActionWrite] != 0 || len(doc.Result.Groups) != 0 {
		t.Errorf("fresh re-run: plan %+v, result %+v; want 2 equal, nothing to write", s, doc.Result)
	}
	for _, b := range []string{again, fresh} {
		if _, recs := readBackup(t, b); len(recs) != 0 {
			t.Errorf("re-run backup %s holds %d records, want none: %+v", b, len(recs), recs)
		}
	}
	for k, c := range e.committed(g) {
		if c.Metadata != sentinel || c.Offset != offsets[k.Partition] {
			t.Errorf("%s: commit %d %q after the re-runs, want %d %q untouched", k, c.Offset, c.Metadata, offsets[k.Partition], sentinel)
		}
	}
	if got, w := e.offsets(g), want(topic, offsets); !maps.Equal(got, w) {
		t.Errorf("kafka holds %v, want %v", got, w)
	}
}
