package verify

import (
	"strconv"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func off(topic string, p int32, v int64) migrate.LegacyOffset {
	return migrate.LegacyOffset{Topic: topic, Partition: p, Offset: v, Path: "/consumers/g/offsets/" + topic + "/" + strconv.Itoa(int(p)),
		Mtime: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func commits(kv ...any) migrate.GroupState {
	s := migrate.GroupState{State: "Empty", Committed: map[migrate.TopicPartition]int64{}}
	for i := 0; i < len(kv); i += 3 {
		s.Committed[migrate.TopicPartition{Topic: kv[i].(string), Partition: int32(kv[i+1].(int))}] = int64(kv[i+2].(int))
	}
	return s
}

func lead(n int64) *int64 { return &n }

// copied is a group whose commit of t/0 is offset, written by a zk2kafka copy with adjust.
func copied(offset, adjust int64) migrate.GroupState {
	s := commits("t", 0, int(offset))
	s.Metadata = map[migrate.TopicPartition]string{{Topic: "t", Partition: 0}: migrate.Provenance{Version: "v1", Adjust: adjust}.String()}
	return s
}

// logs describes topic t with two partitions, both with the log range [start, end].
func logs(start, end int64) map[string]migrate.TopicInfo {
	r := migrate.PartitionRange{LogStart: start, LogEnd: end}
	return map[string]migrate.TopicInfo{"t": {Exists: true, Partitions: map[int32]migrate.PartitionRange{0: r, 1: r}}}
}

func TestComparePartitions(t *testing.T) {
	cases := []struct {
		name    string
		zk      []migrate.LegacyOffset
		kafka   migrate.GroupState
		opts    Options
		topics  map[string]migrate.TopicInfo
		want    []Status
		wantOK  []bool
		verdict Verdict
	}{
		{name: "match", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 10),
			want: []Status{StatusMatch}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "kafka ahead passes by default", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 15),
			want: []Status{StatusKafkaAhead}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "kafka ahead fails strict", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 15),
			opts: Options{Strict: true}, want: []Status{StatusKafkaAhead}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "kafka ahead within lead", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 15),
			opts: Options{MaxKafkaLead: lead(5)}, want: []Status{StatusKafkaAhead}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "kafka ahead beyond lead", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 16),
			opts: Options{MaxKafkaLead: lead(5)}, want: []Status{StatusKafkaAhead}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "lead zero allows only equality", zk: []migrate.LegacyOffset{off("t", 0, 10), off("t", 1, 3)}, kafka: commits("t", 0, 11, "t", 1, 3),
			opts: Options{MaxKafkaLead: lead(0)}, want: []Status{StatusKafkaAhead, StatusMatch}, wantOK: []bool{false, true}, verdict: VerdictFail},
		{name: "kafka behind", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 9),
			want: []Status{StatusKafkaBehind}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "missing in kafka", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: migrate.GroupState{},
			want: []Status{StatusMissingInKafka}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "missing in zk", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 10, "t", 1, 4),
			want: []Status{StatusMatch, StatusMissingInZK}, wantOK: []bool{true, false}, verdict: VerdictFail},
		{name: "missing in zk of an unselected topic is ignored", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 10, "other", 0, 4),
			opts: Options{MatchTopic: func(s string) bool { return s == "t" }}, want: []Status{StatusMatch}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "invalid znode fails even when kafka has a commit",
			zk:    []migrate.LegacyOffset{{Topic: "t", Partition: 0, Path: "/consumers/g/offsets/t/0", Invalid: `offset data "-1": the no-offset sentinel`}},
			kafka: commits("t", 0, 10), want: []Status{StatusInvalidZnode}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "0.7-era partition name", zk: []migrate.LegacyOffset{{Topic: "t", Partition: -1, Path: "/consumers/g/offsets/t/1-0", Invalid: "brokerId-partition"}},
			kafka: commits(), want: []Status{StatusInvalidZnode}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "two znodes for one partition",
			zk:    []migrate.LegacyOffset{off("t", 0, 10), {Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g/offsets/t/00"}},
			kafka: commits("t", 0, 10), want: []Status{StatusInvalidZnode, StatusInvalidZnode}, wantOK: []bool{false, false}, verdict: VerdictFail},
		{name: "empty group passes", want: []Status{}, wantOK: []bool{}, verdict: VerdictPass},
		{name: "kafka above the log end fails though both stores agree", zk: []migrate.LegacyOffset{off("t", 0, 500)}, kafka: commits("t", 0, 500),
			topics: logs(0, 100), want: []Status{StatusKafkaOutOfRange}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "kafka below the log start fails though both stores agree", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 10),
			topics: logs(50, 100), want: []Status{StatusKafkaOutOfRange}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "kafka at either end of the log passes", zk: []migrate.LegacyOffset{off("t", 0, 50), off("t", 1, 100)}, kafka: commits("t", 0, 50, "t", 1, 100),
			topics: logs(50, 100), want: []Status{StatusMatch, StatusMatch}, wantOK: []bool{true, true}, verdict: VerdictPass},
		{name: "a commit only kafka has, above the log end", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 10, "t", 1, 101),
			topics: logs(0, 100), want: []Status{StatusMatch, StatusKafkaOutOfRange}, wantOK: []bool{true, false}, verdict: VerdictFail},
		{name: "out of range wins over kafka-ahead", zk: []migrate.LegacyOffset{off("t", 0, 10)}, kafka: commits("t", 0, 200),
			topics: logs(0, 100), want: []Status{StatusKafkaOutOfRange}, wantOK: []bool{false}, verdict: VerdictFail},
		// --offset-adjust: what verify expects, and the adjust a zk2kafka copy recorded in the commit.
		{name: "adjust: kafka at znode + adjust matches", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(151, 1),
			opts: Options{OffsetAdjust: 1, Strict: true}, want: []Status{StatusMatch}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "adjust: a copy's +1 is not consumer progress", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(151, 1),
			want: []Status{StatusAdjustMismatch}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "adjust: a copy without adjust, verify expects +1", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(150, 0),
			opts: Options{OffsetAdjust: 1}, want: []Status{StatusAdjustMismatch}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "adjust: a copy without adjust, verify expects -1", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(150, 0),
			opts: Options{OffsetAdjust: -1}, want: []Status{StatusAdjustMismatch}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "adjust: a copy without adjust, verify without", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(150, 0),
			opts: Options{Strict: true}, want: []Status{StatusMatch}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "adjust: another writer's commit one ahead is progress", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: commits("t", 0, 151),
			want: []Status{StatusKafkaAhead}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "adjust: a copy's +2, verify expects +1", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: copied(152, 2),
			opts: Options{OffsetAdjust: 1}, want: []Status{StatusAdjustMismatch}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "adjust: consumers moved on since the copy", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: commits("t", 0, 170),
			opts: Options{OffsetAdjust: 1}, want: []Status{StatusKafkaAhead}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "adjust: the copy's commit, but ZooKeeper moved on since", zk: []migrate.LegacyOffset{off("t", 0, 160)}, kafka: copied(151, 1),
			opts: Options{OffsetAdjust: 1}, want: []Status{StatusKafkaBehind}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "adjust: -1 expected below the znode", zk: []migrate.LegacyOffset{off("t", 0, 150)}, kafka: commits("t", 0, 149),
			opts: Options{OffsetAdjust: -1, Strict: true}, want: []Status{StatusMatch}, wantOK: []bool{true}, verdict: VerdictPass},
		{name: "adjust: znode 0 with -1 is not an offset", zk: []migrate.LegacyOffset{off("t", 0, 0)}, kafka: commits("t", 0, 0),
			opts: Options{OffsetAdjust: -1}, want: []Status{StatusInvalidZnode}, wantOK: []bool{false}, verdict: VerdictFail},
		{name: "a topic not described or missing is not checked", zk: []migrate.LegacyOffset{off("t", 0, 500), off("u", 0, 500)}, kafka: commits("t", 0, 500, "u", 0, 500),
			topics: map[string]migrate.TopicInfo{"u": {}}, want: []Status{StatusMatch, StatusMatch}, wantOK: []bool{true, true}, verdict: VerdictPass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare([]migrate.LegacyGroup{{Group: "g", Offsets: tc.zk}}, map[string]migrate.GroupState{"g": tc.kafka}, tc.topics, tc.opts)
			if len(r.Groups) != 1 {
				t.Fatalf("%d groups", len(r.Groups))
			}
			g := r.Groups[0]
			if len(g.Partitions) != len(tc.want) {
				t.Fatalf("partitions %+v, want statuses %v", g.Partitions, tc.want)
			}
			for i, p := range g.Partitions {
				if p.Status != tc.want[i] || p.OK != tc.wantOK[i] || p.Reason == "" {
					t.Errorf("partition %d: %s ok=%t %q, want %s ok=%t", i, p.Status, p.OK, p.Reason, tc.want[i], tc.wantOK[i])
				}
			}
			if g.Verdict != tc.verdict || r.Pass != (tc.verdict == VerdictPass) {
				t.Errorf("verdict %s, pass %t; want %s", g.Verdict, r.Pass, tc.verdict)
			}
		})
	}
}

func TestCompareGroupsAndSummary(t *testing.T) {
	legacy := []migrate.LegacyGroup{
		{Group: "b", Offsets: []migrate.LegacyOffset{off("t", 1, 5), off("t", 0, 7)}, LiveConsumers: []string{"ids/z", "ids/a"}},
		{Group: "a", Offsets: []migrate.LegacyOffset{off("t", 0, 1)}},
		{Group: "unknown-to-kafka", Offsets: []migrate.LegacyOffset{off("t", 0, 1)}},
	}
	kafka := map[string]migrate.GroupState{"a": commits("t", 0, 1), "b": commits("t", 0, 7, "t", 1, 4)}
	r := Compare(legacy, kafka, nil, Options{})
	names := []string{}
	for _, g := range r.Groups {
		names = append(names, g.Group)
	}
	if len(names) != 3 || names[0] != "a" || names[1] != "b" || names[2] != "unknown-to-kafka" {
		t.Fatalf("groups %v, want sorted a, b, unknown-to-kafka", names)
	}
	b := r.Groups[1]
	if b.Partitions[0].Partition != 0 || b.Partitions[1].Partition != 1 || b.LiveConsumers[0] != "ids/a" {
		t.Errorf("group b not sorted: %+v", b)
	}
	s := r.Summary
	if r.Pass || s.Groups != 3 || s.GroupsPassed != 1 || s.GroupsFailed != 2 || s.Partitions != 4 || s.Failed != 2 ||
		s.ByStatus[StatusMatch] != 2 || s.ByStatus[StatusKafkaBehind] != 1 || s.ByStatus[StatusMissingInKafka] != 1 {
		t.Errorf("summary %+v pass %t", s, r.Pass)
	}
	if f := b.Failures(); len(f) != 1 || f[0].Status != StatusKafkaBehind {
		t.Errorf("failures of b: %+v", f)
	}
	if r := Compare(nil, nil, nil, Options{}); !r.Pass || len(r.Groups) != 0 || r.SchemaVersion != ReportSchemaVersion {
		t.Errorf("no groups: %+v", r)
	}
}

// Compare must not share the caller's slices: a report is a value.
func TestCompareDoesNotAliasInputs(t *testing.T) {
	live := []string{"ids/b", "ids/a"}
	Compare([]migrate.LegacyGroup{{Group: "g", LiveConsumers: live}}, nil, nil, Options{})
	if live[0] != "ids/b" {
		t.Errorf("Compare sorted the caller's slice: %v", live)
	}
}
