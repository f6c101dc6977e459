package e2e_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/mm2log"
)

// mm2Args are the command line's target and replication flags for the mm2 stack: zk2kafka
// reaches the target as MirrorMaker 2 does, through its SASL_SSL listener, with Kafka's
// client.properties (SCRAM-SHA-512, a JKS trust store).
func mm2Args(st *stacktest.Stack) []string {
	return []string{"--target-kafka", st.KafkaTargetSASL, "--target-command-config", st.KafkaTargetClientProperties,
		"--mm2-source-alias", st.MM2SourceAlias, "--mm2-target-alias", st.MM2TargetAlias,
		"--mm2-offset-lag-max", strconv.FormatInt(st.MM2OffsetLagMax, 10)}
}

// TestMirrorMakerMigrate migrates a legacy consumer's ZooKeeper offsets into the target cluster
// MirrorMaker 2 replicates the source into, replication having started past deleted records (so
// the target's offsets are not the source's): plan --out, then copy --plan --execute. A current
// consumer (sarama's consumer group) then reads the target from the committed offsets: every
// source record at or after the ZooKeeper offset is read (none skipped), and what it reads
// before it is at most what plan announced for the partition.
func TestMirrorMakerMigrate(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	records, starts := []int{300, 50, 120}, []int64{100, 20, 0}
	topic := e.unreplicatedStart(records, starts)
	target := st.MM2SourceAlias + "." + topic
	syncs := e.waitSyncs(topic, records)

	// The legacy consumer's positions: mid-log, at the source's end (nothing left to read), and
	// just past a record (an offset a sync is unlikely to pin). MirrorMaker 2 may leave the first
	// records it replicates without a sync (a loaded run left 100..297 of partition 0 so): such an
	// offset is below-first-sync, TestMirrorMakerMigrateRefusals' case, so a position below the
	// first offset that translates moves up to it.
	zkOffs := map[int32]int64{0: 217, 1: 50, 2: 61}
	for p, want := range zkOffs {
		if first := firstTranslated(t, syncs, topic, p, starts[p], int64(records[p]), st.MM2OffsetLagMax); first > want {
			t.Logf("%s/%d: the first offset that translates is %d, above %d: the consumer is placed there", topic, p, first, want)
			zkOffs[p] = first
		}
	}
	g := e.group()
	e.zkOffsets(g, topic, zkOffs)

	planFile := e.file("plan.json")
	r := e.mustCLI(0, append([]string{"migrate", "plan", "--group", g, "-o", "json", "--out", planFile}, mm2Args(st)...)...)
	plan := decodeJSON[planDoc](t, r).groupPlan(t, g)
	announced := map[int32]int64{}
	for _, en := range plan.Entries {
		if en.Topic != target || en.Source == nil || en.Source.Topic != topic || en.Source.Offset != zkOffs[en.Partition] || en.Action != migrate.ActionWrite {
			t.Fatalf("plan entry %+v (source %+v): want a write into %s from %s", en, en.Source, target, topic)
		}
		announced[en.Partition] = en.Source.MaxReread
	}
	if len(announced) != len(records) {
		t.Fatalf("plan has %d entries, want %d:\n%s", len(plan.Entries), len(records), r)
	}
	e.deleteTargetGroupAtEnd(g)
	e.mustCLI(0, append([]string{"migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup.jsonl")}, mm2Args(st)...)...)
	r = e.mustCLI(0, append([]string{"migrate", "verify", "--group", g, "-o", "json"}, mm2Args(st)...)...)
	if n := strings.Count(r.stdout, `"status": "match"`); n != len(records) {
		t.Errorf("verify: %d partitions match, want %d:\n%s", n, len(records), r)
	}

	tc := e.targetClient()
	read := e.consumeTargetAsSource(tc, g, target, len(records))
	for p, n := range records {
		part := int32(p)
		got := read[part]
		reread, err := checkRead(got, zkOffs[part], int64(n))
		if err != nil {
			t.Errorf("%s/%d: the consumer resumed from ZooKeeper %d: %v (read source records %v)", target, p, zkOffs[part], err, got)
		}
		if reread > announced[part] {
			t.Errorf("%s/%d: %d records read again, more than the %d plan announced", target, p, reread, announced[part])
		}
		t.Logf("%s/%d: ZooKeeper %d; %d records read, %d of them again (plan announced at most %d)", target, p, zkOffs[part], len(got), reread, announced[part])
	}
}

// firstTranslated is the first source offset of topic/p in [from, to] that the syncs place.
func firstTranslated(t *testing.T, syncs mm2log.Log, topic string, p int32, from, to, lagMax int64) int64 {
	t.Helper()
	s := syncs.Syncs[migrate.TopicPartition{Topic: topic, Partition: p}]
	for off := from; off <= to; off++ {
		if !s.Translate(off, lagMax).Class.Blocked() {
			return off
		}
	}
	t.Fatalf("%s/%d: no offset in %d..%d translates", topic, p, from, to)
	return 0
}

// checkRead checks the source offsets a consumer read, in order: every source record from off
// to end exactly once after any re-read ones (below off), none skipped; it returns how many
// were read again.
func checkRead(got []int64, off, end int64) (int64, error) {
	var reread int64
	next := off
	for _, src := range got {
		switch {
		case src < off && next == off:
			reread++
		case src == next:
			next++
		default:
			return reread, fmt.Errorf("source record %d read where %d was due", src, next)
		}
	}
	if next != end {
		return reread, fmt.Errorf("source records %d..%d never read", next, end-1)
	}
	return reread, nil
}

// deleteTargetGroupAtEnd deletes the target's group g at the end of the test.
func (e *env) deleteTargetGroupAtEnd(g string) {
	e.t.Cleanup(func() {
		admin, err := sarama.NewClusterAdmin([]string{e.st.KafkaTarget}, e.saramaConfig())
		if err != nil {
			e.t.Logf("target admin: %v", err)
			return
		}
		defer func() {
			if err := admin.Close(); err != nil {
				e.t.Logf("close target admin: %v", err)
			}
		}()
		if err := admin.DeleteConsumerGroup(g); err != nil && !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
			e.t.Logf("delete target group %s: %v", g, err)
		}
	})
}

// TestMirrorMakerMigrateRefusals: what the translation cannot place is a class of its own or an
// error naming the setting at fault, plan exits 2 (or 1), and copy --execute writes nothing into
// the target.
func TestMirrorMakerMigrateRefusals(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	records, starts := []int{200}, []int64{100}
	replicated := e.unreplicatedStart(records, starts)
	e.waitSyncs(replicated, records)
	local := e.topic(50) // not named for MirrorMaker 2: never replicated
	tw := e.targetWriter()
	cases := []struct {
		name   string
		topic  string
		offset int64
		args   []string // replacing mm2Args' values
		code   int
		want   []string // in plan's output (exit 2) or its error (exit 1)
	}{
		{name: "a topic not replicated", topic: local, offset: 20, code: 2,
			want: []string{"topic-missing", fmt.Sprintf(`topic \"%s.%s\", the target's name for source topic \"%s\", does not exist in the target cluster`, st.MM2SourceAlias, local, local)}},
		{name: "a source alias that does not match", topic: replicated, offset: 150, args: []string{"--mm2-source-alias", "elsewhere"}, code: 2,
			want: []string{"topic-missing", fmt.Sprintf(`topic \"elsewhere.%s\"`, replicated)}},
		{name: "a target alias that does not match", topic: replicated, offset: 150, args: []string{"--mm2-target-alias", "elsewhere"}, code: 1,
			want: []string{"offset-syncs topic not found: mm2-offset-syncs.elsewhere.internal on the source cluster at " + st.Kafka}},
		{name: "syncs looked for on the wrong cluster", topic: replicated, offset: 150, args: []string{"--mm2-offset-syncs-location", "target"}, code: 1,
			want: []string{"mm2-offset-syncs." + st.MM2SourceAlias + ".internal on the target cluster at " + st.KafkaTargetSASL}},
		{name: "an offset below the first sync", topic: replicated, offset: 50, code: 2,
			want: []string{"below-first-sync", "offset 50 is below the first offset sync left"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := e.sub(t)
			g := e.group()
			e.zkOffsets(g, tc.topic, map[int32]int64{0: tc.offset})
			args := withFlags(mm2Args(st), tc.args)
			r := e.cli(append([]string{"migrate", "plan", "--group", g, "-o", "json"}, args...)...)
			out := r.stdout + r.stderr
			for _, w := range tc.want {
				if r.code != tc.code || !strings.Contains(out, w) {
					t.Fatalf("plan: want exit %d with %q, got %s", tc.code, w, r)
				}
			}
			r = e.cli(append([]string{"migrate", "copy", "--group", g, "--execute", "--backup", e.file("backup.jsonl")}, args...)...)
			if r.code != tc.code {
				t.Errorf("copy --execute: want exit %d, got %s", tc.code, r)
			}
			got, err := tw.FetchCommitted(e.ctx(), g)
			if err != nil || len(got) != 0 {
				t.Errorf("the target holds commits of %s after the refusal: %v, %v", g, got, err)
			}
		})
	}
}

// withFlags is args with each flag of over given its new value (flag, value pairs).
func withFlags(args, over []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(over); i += 2 {
		for j := 0; j+1 < len(out); j += 2 {
			if out[j] == over[i] {
				out[j+1] = over[i+1]
			}
		}
		if !slices.Contains(out, over[i]) {
			out = append(out, over[i], over[i+1])
		}
	}
	return out
}

// targetWriter is zk2kafka's own Kafka adapter on the target cluster, closed at the end.
func (e *env) targetWriter() *kafkawriter.Client {
	e.t.Helper()
	c, err := kafkawriter.Open(e.ctx(), kafkawriter.Config{Bootstrap: []string{e.st.KafkaTarget}})
	if err != nil {
		e.t.Fatalf("open target kafka %s: %v", e.st.KafkaTarget, err)
	}
	e.t.Cleanup(func() {
		if err := c.Close(); err != nil {
			e.t.Errorf("close target kafka client: %v", err)
		}
	})
	return c
}

// TestMirrorMakerStoppedPartWay: MirrorMaker 2 stopped (by its pid) while the source goes on.
// A legacy consumer past what was replicated is replication-behind: plan exits 2, copy writes
// nothing of it (another group, within the replicated records, is written), verify fails it as
// not-replicated. Once MirrorMaker 2 runs again and caught up, the same group migrates, and a
// consumer on the target reads every record it had not consumed.
func TestMirrorMakerStoppedPartWay(t *testing.T) {
	st := stacktest.GetMirrorMaker2(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	topic := e.unreplicatedStart([]int{100}, []int64{30})
	target := st.MM2SourceAlias + "." + topic
	syncs := e.waitSyncs(topic, []int{100})
	start := st.StopMirrorMaker2(t)
	// A position within the replicated records that translates (the first ones may have no sync).
	within0 := max(80, firstTranslated(t, syncs, topic, 0, 30, 100, st.MM2OffsetLagMax))
	e.produce(topic, 100, 300) // source offsets 100..299, not replicated while it is stopped

	ahead, within := e.group(), e.group()
	e.deleteTargetGroupAtEnd(ahead)
	e.deleteTargetGroupAtEnd(within)
	e.zkOffsets(ahead, topic, map[int32]int64{0: 250})
	e.zkOffsets(within, topic, map[int32]int64{0: within0})
	tw := e.targetWriter()
	args := mm2Args(st)

	r := e.cli(append([]string{"migrate", "plan", "--group", ahead, "--group", within, "-o", "json"}, args...)...)
	if r.code != 2 {
		t.Fatalf("plan: want exit 2, got %s", r)
	}
	doc := decodeJSON[planDoc](t, r)
	if en := doc.groupPlan(t, ahead).Entries[0]; en.Class != migrate.ClassReplicationBehind || en.Action != migrate.ActionBlock {
		t.Errorf("the consumer past the replication: %s %s (%s), want replication-behind block", en.Class, en.Action, en.Reason)
	}
	if en := doc.groupPlan(t, within).Entries[0]; en.Action != migrate.ActionWrite {
		t.Errorf("the consumer within the replication: %s %s (%s), want a write", en.Class, en.Action, en.Reason)
	}
	r = e.cli(append([]string{"migrate", "copy", "--group", ahead, "--group", within, "--execute", "--backup", e.file("backup.jsonl")}, args...)...)
	if r.code != 2 {
		t.Errorf("copy --execute: want exit 2 (a partition blocked), got %s", r)
	}
	if got, err := tw.FetchCommitted(e.ctx(), ahead); err != nil || len(got) != 0 {
		t.Errorf("the target holds commits of %s past the replication: %v, %v", ahead, got, err)
	}
	if got, err := tw.FetchCommitted(e.ctx(), within); err != nil || len(got) != 1 {
		t.Errorf("the target's commits of %s within the replication: %v, %v; want one", within, got, err)
	}
	r = e.cli(append([]string{"migrate", "verify", "--group", ahead, "-o", "json"}, args...)...)
	if r.code != 2 || !strings.Contains(r.stdout, `"status": "not-replicated"`) {
		t.Errorf("verify: want exit 2 with not-replicated, got %s", r)
	}

	start()
	e.waitSyncs(topic, []int{300})
	r = e.mustCLI(0, append([]string{"migrate", "plan", "--group", ahead, "-o", "json"}, args...)...)
	announced := decodeJSON[planDoc](t, r).groupPlan(t, ahead).Entries[0].Source.MaxReread
	e.mustCLI(0, append([]string{"migrate", "copy", "--group", ahead, "--execute", "--backup", e.file("backup2.jsonl")}, args...)...)
	e.mustCLI(0, append([]string{"migrate", "verify", "--group", ahead}, args...)...)
	tc := e.targetClient()
	got := e.consumeTargetAsSource(tc, ahead, target, 1)[0]
	reread, err := checkRead(got, 250, 300)
	if err != nil {
		t.Errorf("%s/0 after MirrorMaker 2 caught up: %v (read %v)", target, err, got)
	}
	if reread > announced {
		t.Errorf("%s/0: %d records read again, more than the %d plan announced", target, reread, announced)
	}
	t.Logf("%s/0: ZooKeeper 250 migrated once MirrorMaker 2 caught up; %d records read, %d of them again (plan announced at most %d)",
		target, len(got), reread, announced)
}
