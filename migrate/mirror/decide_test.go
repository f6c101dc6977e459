package mirror_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestMirrorDoesNotWriteAboveLogEnd: a ZooKeeper offset beyond the partition's log end is what
// plan classifies above-log-end and blocks; the mirror must not commit it either (it did: the
// consumers of that partition would all have reset at cutover).
func TestMirrorDoesNotWriteAboveLogEnd(t *testing.T) {
	f := newFixture() // topic t: log end 1000
	f.legacy.SetOffset("g", "t", 0, 5000)
	f.start(t)
	s := f.obs.next(t, "g")
	if w, ok := writes(s, mirror.ReasonMirror)["t/0"]; ok {
		t.Errorf("wrote %+v: an offset above the log end was mirrored", w)
	}
	if got, ok := kafkaOffsets(t, f.kafka, "g")["t/0"]; ok {
		t.Errorf("kafka holds %d for t/0, want no commit", got)
	}
	if s.Blocked[migrate.ClassAboveLogEnd] != 1 {
		t.Errorf("blocked %v, want 1 above-log-end", s.Blocked)
	}
}

// TestMirrorDecidesAsPlan: each write into Kafka is plan's decision for the partition under the
// policy (never the group's gates: legacy consumers run while the mirror works); what plan
// blocks is counted by class and not written.
func TestMirrorDecidesAsPlan(t *testing.T) {
	type zk struct {
		topic     string
		partition int32
		offset    int64
		path      string // "" the normal one
		invalid   string
	}
	cases := []struct {
		name   string
		policy migrate.Policy
		zk     []zk
		kafka  map[string]int64 // "topic/partition" -> committed before
		live   bool

		want    map[string]int64 // mirror writes into Kafka
		blocked map[migrate.Class]int
		reason  string // in BlockedReasons
	}{
		{name: "above log end: blocked", zk: []zk{{topic: "t", offset: 5000}},
			blocked: map[migrate.Class]int{migrate.ClassAboveLogEnd: 1}, reason: "above log end 1000"},
		{name: "above log end, clamp: the log end written", policy: migrate.Policy{OutOfRange: migrate.RangeClamp},
			zk: []zk{{topic: "t", offset: 5000}}, kafka: map[string]int64{"t/0": 400}, want: map[string]int64{"t/0": 1000}},
		{name: "above log end, skip: left, not blocked", policy: migrate.Policy{OutOfRange: migrate.RangeSkip},
			zk: []zk{{topic: "t", offset: 5000}}},
		{name: "below log start: blocked", zk: []zk{{topic: "r", offset: 50}},
			blocked: map[migrate.Class]int{migrate.ClassBelowLogStart: 1}, reason: "below log start 100"},
		{name: "below log start, clamp: the log start written", policy: migrate.Policy{OutOfRange: migrate.RangeClamp},
			zk: []zk{{topic: "r", offset: 50}}, want: map[string]int64{"r/0": 100}},
		{name: "clamped below what kafka holds: never backwards", policy: migrate.Policy{OutOfRange: migrate.RangeClamp},
			zk: []zk{{topic: "r", offset: 50}}, kafka: map[string]int64{"r/0": 150}, live: true},
		{name: "topic missing: counted, not written", zk: []zk{{topic: "gone", offset: 10}, {topic: "t", offset: 10}},
			want: map[string]int64{"t/0": 10}, blocked: map[migrate.Class]int{migrate.ClassTopicMissing: 1}, reason: `topic "gone" does not exist`},
		{name: "partition missing: counted, not written", zk: []zk{{topic: "t", partition: 7, offset: 10}},
			blocked: map[migrate.Class]int{migrate.ClassPartitionMissing: 1}},
		{name: "invalid znode: counted, not written", zk: []zk{{topic: "t", invalid: "empty znode data"}, {topic: "t", partition: 1, offset: 10}},
			want: map[string]int64{"t/1": 10}, blocked: map[migrate.Class]int{migrate.ClassInvalidZnode: 1}, reason: "empty znode data"},
		{name: "two znodes for one partition: both invalid", zk: []zk{{topic: "t", offset: 10}, {topic: "t", offset: 12, path: "/consumers/g/offsets/t/00"}},
			blocked: map[migrate.Class]int{migrate.ClassInvalidZnode: 2}},
		{name: "legacy consumers alive: no gate, mirrored", zk: []zk{{topic: "t", offset: 10}}, live: true, want: map[string]int64{"t/0": 10}},
		{name: "offset-adjust: the adjusted offset written", policy: migrate.Policy{OffsetAdjust: 1},
			zk: []zk{{topic: "t", offset: 10}}, want: map[string]int64{"t/0": 11}},
		{name: "offset-adjust past the log end: blocked", policy: migrate.Policy{OffsetAdjust: 1},
			zk: []zk{{topic: "t", offset: 1000}}, blocked: map[migrate.Class]int{migrate.ClassAboveLogEnd: 1}},
		{name: "on-conflict=fail blocks kafka-ahead", policy: migrate.Policy{OnConflict: migrate.ConflictFail},
			zk: []zk{{topic: "t", offset: 10}}, kafka: map[string]int64{"t/0": 20}, live: true,
			blocked: map[migrate.Class]int{migrate.ClassKafkaAhead: 1}, reason: "--on-conflict=fail"},
		{name: "on-conflict=fail blocks zk-ahead too, as plan does", policy: migrate.Policy{OnConflict: migrate.ConflictFail},
			zk: []zk{{topic: "t", offset: 30}, {topic: "t", partition: 1, offset: 5}}, kafka: map[string]int64{"t/0": 20}, live: true,
			want: map[string]int64{"t/1": 5}, blocked: map[migrate.Class]int{migrate.ClassZKAhead: 1}},
		{name: "on-conflict=max skips kafka-ahead", zk: []zk{{topic: "t", offset: 10}}, kafka: map[string]int64{"t/0": 20}, live: true},
		{name: "on-conflict=kafka writes only where kafka has no commit", policy: migrate.Policy{OnConflict: migrate.ConflictKafka},
			zk: []zk{{topic: "t", offset: 30}, {topic: "t", partition: 1, offset: 5}}, kafka: map[string]int64{"t/0": 20}, live: true,
			want: map[string]int64{"t/1": 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.kafka.AddTopic("r", migrate.PartitionRange{LogStart: 100, LogEnd: 200})
			f.m.Policy = tc.policy
			lg := migrate.LegacyGroup{Group: "g"}
			for _, o := range tc.zk {
				p := o.path
				if p == "" {
					p = "/consumers/g/offsets/" + o.topic + "/" + itoa(int64(o.partition))
				}
				lg.Offsets = append(lg.Offsets, migrate.LegacyOffset{Topic: o.topic, Partition: o.partition, Offset: o.offset, Path: p, Invalid: o.invalid})
			}
			if tc.live {
				lg.LiveConsumers = []string{"ids/c1"}
			}
			f.legacy.SetGroup(lg)
			before := map[string]int64{}
			for k, off := range tc.kafka {
				topic, p, _ := strings.Cut(k, "/")
				f.kafka.SetCommitted("g", topic, int32(atoi(t, p)), off)
				before[k] = off
			}
			f.start(t)
			s := f.obs.next(t, "g")
			got := map[string]int64{}
			for k, w := range writes(s, mirror.ReasonMirror) {
				if w.Err != nil || w.Refused {
					t.Errorf("write %s: %+v", k, w)
				}
				got[k] = w.To
			}
			want := tc.want
			if want == nil {
				want = map[string]int64{}
			}
			if !maps.Equal(got, want) {
				t.Errorf("mirror writes %v, want %v", got, want)
			}
			if !maps.Equal(s.Blocked, tc.blocked) {
				t.Errorf("blocked %v, want %v (reasons %q)", s.Blocked, tc.blocked, s.BlockedReasons)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(s.BlockedReasons, "\n"), tc.reason) {
				t.Errorf("blocked reasons %q, want one saying %q", s.BlockedReasons, tc.reason)
			}
			// Kafka holds exactly what it held plus the writes.
			wantKafka := maps.Clone(before)
			maps.Copy(wantKafka, want)
			if k := kafkaOffsets(t, f.kafka, "g"); !maps.Equal(k, wantKafka) {
				t.Errorf("kafka afterwards %v, want %v", k, wantKafka)
			}
		})
	}
}

// TestMirrorOffsetAdjustKeepsThePhase: with --offset-adjust +1 the mirrored Kafka offset is one
// above the znode; the phases compare the adjusted offset, so the group stays zk-primary and
// the next change is mirrored (compared raw, Kafka would look ahead and stop the mirror).
func TestMirrorOffsetAdjustKeepsThePhase(t *testing.T) {
	f := newFixture()
	f.m.Policy = migrate.Policy{OffsetAdjust: 1}
	f.legacy.SetOffset("g", "t", 0, 10)
	f.start(t)
	if s := f.obs.next(t, "g"); s.Phase != mirror.PhaseZKPrimary || writes(s, mirror.ReasonMirror)["t/0"].To != 11 {
		t.Fatalf("first sync %+v, want zk-primary and 11 written", s)
	}
	f.legacy.SetOffset("g", "t", 0, 20)
	f.watch.fire(t, "g")
	s := f.obs.next(t, "g")
	if s.Phase != mirror.PhaseZKPrimary || s.Lead != 0 {
		t.Errorf("phase %s lead %d after an adjusted write, want zk-primary and no lead", s.Phase, s.Lead)
	}
	if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != 21 {
		t.Errorf("kafka t/0 %d, want 21", got)
	}
}

// TestMirrorKeepaliveLeavesOutOffsetsOutsideTheLog: the keep-alive re-commits Kafka's own
// offsets, but not one outside the partition's log: the consumer resets from it as it would
// once it expired, and plan would not write it.
func TestMirrorKeepaliveLeavesOutOffsetsOutsideTheLog(t *testing.T) {
	f := newFixture() // t: log end 1000; the first sync keeps alive at once
	f.legacy.SetOffset("g", "t", 0, 10)
	f.kafka.SetCommitted("g", "t", 0, 10)
	f.kafka.SetCommitted("g", "t", 1, 2000) // only Kafka has it, beyond the log end
	f.kafka.SetCommitted("g", "gone", 0, 5) // a topic Kafka no longer has
	f.start(t)
	s := f.obs.next(t, "g")
	ka := writes(s, mirror.ReasonKeepalive)
	if len(ka) != 1 || ka["t/0"].To != 10 {
		t.Errorf("keep-alives %+v, want t/0 at 10 alone", ka)
	}
	for _, want := range []string{"t/1: keep-alive of 2000 left out: above log end 1000", `gone/0: keep-alive of 5 left out: Kafka has no topic "gone"`} {
		if !strings.Contains(strings.Join(s.BlockedReasons, "\n"), want) {
			t.Errorf("reasons %q, want %q", s.BlockedReasons, want)
		}
	}
	if len(s.Blocked) != 0 {
		t.Errorf("blocked %v: keep-alives left out are not plan's blocked partitions", s.Blocked)
	}
}

// TestMirrorDecidesAgainAfterTheWait: with a rate limit the group's turn may come long after
// the batch read; the topics are described again with Kafka, and a write the new description
// puts outside the log (retention raised the log start past it) is not made.
func TestMirrorDecidesAgainAfterTheWait(t *testing.T) {
	f := newFixture()
	f.kafka.AddTopic("r", migrate.PartitionRange{LogStart: 100, LogEnd: 200})
	f.legacy.SetOffset("g", "r", 0, 150)
	f.legacy.SetOffset("g", "t", 0, 10)
	f.m.Limiter = &hookLimiter{hook: func(ctx context.Context, call int) error {
		if call == 1 {
			f.kafka.AddTopic("r", migrate.PartitionRange{LogStart: 180, LogEnd: 250})
		}
		return ctx.Err()
	}}
	f.start(t)
	s := f.obs.next(t, "g")
	if got := writes(s, mirror.ReasonMirror); len(got) != 1 || got["t/0"].To != 10 {
		t.Errorf("writes %+v, want t/0 at 10 alone", got)
	}
	if s.Blocked[migrate.ClassBelowLogStart] != 1 {
		t.Errorf("blocked %v, want 1 below-log-start", s.Blocked)
	}
	if k := kafkaOffsets(t, f.kafka, "g"); !maps.Equal(k, map[string]int64{"t/0": 10}) {
		t.Errorf("kafka %v, want t/0 at 10 alone", k)
	}
}

// TestMirrorRefusesPolicies: --on-conflict=zk would move Kafka backwards; --offset-adjust with
// --reverse would write unadjusted offsets into ZooKeeper. Run refuses both before any read.
func TestMirrorRefusesPolicies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       migrate.Policy
		reverse bool
		want    string
	}{
		{name: "zk", p: migrate.Policy{OnConflict: migrate.ConflictZK}, want: "--on-conflict=zk would move Kafka backwards"},
		{name: "adjust with reverse", p: migrate.Policy{OffsetAdjust: 1}, reverse: true, want: "--offset-adjust +1 with --reverse"},
		{name: "unknown name", p: migrate.Policy{OutOfRange: "nearest"}, want: `unknown out-of-range policy "nearest"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.m.Policy, f.m.Reverse = tc.p, tc.reverse
			err := f.m.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error saying %q", err, tc.want)
			}
			if tc.name != "unknown name" && !errors.Is(err, mirror.ErrPolicy) {
				t.Errorf("Run: %v, want it to wrap ErrMirrorPolicy", err)
			}
			if n := f.legacy.ReadCalls(); n != 0 {
				t.Errorf("%d legacy reads before the refusal", n)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
