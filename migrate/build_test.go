package migrate_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// classScenario is one partition's situation, stated in terms of the ZooKeeper offset AFTER
// --offset-adjust (zk); the test runs it under every policy and several adjusts.
type classScenario struct {
	name  string
	zk    int64
	kafka *int64
	// want maps "<on-conflict>/<out-of-range>" to "class action target"; "*" matches any
	// policy. The test fails when a policy combination has no expectation.
	want map[string]string
}

// The partition's log is [10, 100] in every scenario.
var logRange = migrate.PartitionRange{LogStart: 10, LogEnd: 100}

func classScenarios() []classScenario {
	return []classScenario{
		{"zk-only", 50, nil, map[string]string{"*/*": "zk-only write 50"}},
		{"zk-only at log start", 10, nil, map[string]string{"*/*": "zk-only write 10"}},
		{"zk-only at log end", 100, nil, map[string]string{"*/*": "zk-only write 100"}},
		{"equal", 50, ptr(50), map[string]string{"*/*": "equal skip 50"}},
		{"zk-ahead", 60, ptr(50), map[string]string{
			"max/*": "zk-ahead write 60", "zk/*": "zk-ahead write 60",
			"kafka/*": "zk-ahead skip 60", "fail/*": "zk-ahead block 60"}},
		{"kafka-ahead", 40, ptr(50), map[string]string{
			"max/*": "kafka-ahead skip 40", "zk/*": "kafka-ahead write 40",
			"kafka/*": "kafka-ahead skip 40", "fail/*": "kafka-ahead block 40"}},
		{"below, no commit", 5, nil, map[string]string{
			"*/fail": "below-log-start block 5", "*/skip": "below-log-start skip 5",
			"*/clamp": "below-log-start write 10"}},
		{"below, commit at log start", 5, ptr(10), map[string]string{
			"*/fail": "below-log-start block 5", "*/skip": "below-log-start skip 5",
			"*/clamp": "below-log-start skip 10"}},
		{"below, commit below clamp", 5, ptr(8), map[string]string{
			"*/fail": "below-log-start block 5", "*/skip": "below-log-start skip 5",
			"max/clamp": "below-log-start write 10", "zk/clamp": "below-log-start write 10",
			"kafka/clamp": "below-log-start skip 10", "fail/clamp": "below-log-start block 10"}},
		{"below, commit ahead", 5, ptr(50), map[string]string{
			"*/fail": "below-log-start block 5", "*/skip": "below-log-start skip 5",
			"max/clamp": "below-log-start skip 10", "zk/clamp": "below-log-start write 10",
			"kafka/clamp": "below-log-start skip 10", "fail/clamp": "below-log-start block 10"}},
		{"above, no commit", 150, nil, map[string]string{
			"*/fail": "above-log-end block 150", "*/skip": "above-log-end skip 150",
			"*/clamp": "above-log-end write 100"}},
		{"above, commit at log end", 150, ptr(100), map[string]string{
			"*/fail": "above-log-end block 150", "*/skip": "above-log-end skip 150",
			"*/clamp": "above-log-end skip 100"}},
		{"above, commit behind", 150, ptr(80), map[string]string{
			"*/fail": "above-log-end block 150", "*/skip": "above-log-end skip 150",
			"max/clamp": "above-log-end write 100", "zk/clamp": "above-log-end write 100",
			"kafka/clamp": "above-log-end skip 100", "fail/clamp": "above-log-end block 100"}},
		{"above, commit above clamp", 150, ptr(120), map[string]string{
			"*/fail": "above-log-end block 150", "*/skip": "above-log-end skip 150",
			"max/clamp": "above-log-end skip 100", "zk/clamp": "above-log-end write 100",
			"kafka/clamp": "above-log-end skip 100", "fail/clamp": "above-log-end block 100"}},
	}
}

func lookupWant(want map[string]string, p migrate.Policy) (string, bool) {
	c, r := string(p.OnConflict), string(p.OutOfRange)
	for _, k := range []string{c + "/" + r, c + "/*", "*/" + r, "*/*"} {
		if v, ok := want[k]; ok {
			return v, true
		}
	}
	return "", false
}

func TestBuildClassesUnderEveryPolicy(t *testing.T) {
	for _, sc := range classScenarios() {
		for _, adj := range []int64{0, 1, -1, 7, -7} {
			raw := sc.zk - adj
			if raw < 0 {
				continue // this adjust cannot produce the scenario's offset
			}
			for _, pol := range policies() {
				pol.OffsetAdjust = adj
				name := sc.name + "/" + string(pol.OnConflict) + "/" + string(pol.OutOfRange) + "/adjust" + strconv.FormatInt(adj, 10)
				t.Run(name, func(t *testing.T) {
					want, ok := lookupWant(sc.want, pol)
					if !ok {
						t.Fatalf("scenario has no expectation for this policy")
					}
					checkScenario(t, sc, pol, raw, want)
				})
			}
		}
	}
}

func checkScenario(t *testing.T, sc classScenario, pol migrate.Policy, raw int64, want string) {
	committed := map[migrate.TopicPartition]int64{}
	if sc.kafka != nil {
		committed[migrate.TopicPartition{Topic: "t", Partition: 0}] = *sc.kafka
	}
	in := migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: "g", Offsets: []migrate.LegacyOffset{off("g", "t", 0, raw)}}},
		Topics: map[string]migrate.TopicInfo{"t": topic(logRange)},
		Groups: map[string]migrate.GroupState{"g": {State: "Empty", Committed: committed}},
	}
	plan := migratetest.MustBuild(t, in, pol)
	e := plan.Groups[0].Entries[0]
	got := string(e.Class) + " " + string(e.Action) + " " + strconv.FormatInt(e.Target, 10)
	if got != want {
		t.Fatalf("got %q, want %q (reason %q)", got, want, e.Reason)
	}
	if e.ZK == nil || *e.ZK != sc.zk {
		t.Errorf("ZK = %v, want %d", e.ZK, sc.zk)
	}
	if (e.Kafka == nil) != (sc.kafka == nil) || (e.Kafka != nil && *e.Kafka != *sc.kafka) {
		t.Errorf("Kafka = %v, want %v", e.Kafka, sc.kafka)
	}
	if e.LogStart == nil || *e.LogStart != 10 || e.LogEnd == nil || *e.LogEnd != 100 {
		t.Errorf("log range = %v..%v, want 10..100", e.LogStart, e.LogEnd)
	}
	if e.Znode != znode("g", "t", 0) {
		t.Errorf("Znode = %q", e.Znode)
	}
	checkReason(t, e, sc, pol, raw)
}

// checkReason asserts the reason names the numbers behind the decision.
func checkReason(t *testing.T, e migrate.Entry, sc classScenario, pol migrate.Policy, raw int64) {
	t.Helper()
	must := []string{"ZooKeeper " + strconv.FormatInt(sc.zk, 10)}
	if pol.OffsetAdjust != 0 {
		must = append(must, "znode "+strconv.FormatInt(raw, 10), "--offset-adjust "+strconv.FormatInt(pol.OffsetAdjust, 10))
		if pol.OffsetAdjust > 0 {
			must[len(must)-1] = "--offset-adjust +" + strconv.FormatInt(pol.OffsetAdjust, 10)
		}
	}
	clamped := e.Target != sc.zk
	if clamped {
		must = append(must, "clamped from "+strconv.FormatInt(sc.zk, 10)+" to "+strconv.FormatInt(e.Target, 10))
	}
	outOfRange := e.Class == migrate.ClassBelowLogStart || e.Class == migrate.ClassAboveLogEnd
	if outOfRange && !clamped {
		must = append(must, "--out-of-range="+string(pol.OutOfRange))
	}
	if sc.kafka != nil && (!outOfRange || clamped) {
		must = append(must, strconv.FormatInt(*sc.kafka, 10))
		if *sc.kafka == e.Target {
			must = append(must, "already equal")
		}
	}
	if e.Action == migrate.ActionWrite && sc.kafka != nil && e.Target < *sc.kafka {
		must = append(must, "BACKWARDS from "+strconv.FormatInt(*sc.kafka, 10)+" to "+strconv.FormatInt(e.Target, 10))
	}
	if e.Action == migrate.ActionWrite && sc.kafka == nil {
		must = append(must, "no commit")
	}
	for _, s := range must {
		if !strings.Contains(e.Reason, s) {
			t.Errorf("reason %q does not contain %q", e.Reason, s)
		}
	}
}
