package contract

import (
	"context"
	"errors"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// KafkaStateHarness returns a KafkaState over a cluster and the means to arrange it. It is
// called once per case; the cluster may be shared (Kafka's names are unique per case).
type KafkaStateHarness func(t *testing.T) (migrate.KafkaState, Kafka)

// TestKafkaState runs the migrate.KafkaState suite: one subtest per clause of its comment
// (and of TopicInfo's and GroupState's).
func TestKafkaState(t *testing.T, h KafkaStateHarness) {
	cases := []struct {
		clause string
		run    func(t *testing.T, s migrate.KafkaState, k Kafka)
	}{
		{"Topics/a new topic: every partition, log start and end 0", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic := k.Topic(t, 3)
			got := topics(t, s, topic)[topic]
			want := map[int32]migrate.PartitionRange{0: {}, 1: {}, 2: {}}
			checkTopic(t, topic, got, want)
		}},
		{"Topics/log end is where the next record goes", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic := k.Topic(t, 3)
			k.Produce(t, topic, 0, 5)
			k.Produce(t, topic, 1, 3)
			got := topics(t, s, topic)[topic]
			checkTopic(t, topic, got, map[int32]migrate.PartitionRange{0: {LogEnd: 5}, 1: {LogEnd: 3}, 2: {}})
		}},
		{"Topics/log start is the first record kept", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic := k.Topic(t, 2)
			k.Produce(t, topic, 0, 5)
			k.Produce(t, topic, 1, 2)
			k.DeleteRecords(t, topic, 0, 2)
			k.DeleteRecords(t, topic, 1, 2)
			got := topics(t, s, topic)[topic]
			checkTopic(t, topic, got, map[int32]migrate.PartitionRange{0: {LogStart: 2, LogEnd: 5}, 1: {LogStart: 2, LogEnd: 2}})
		}},
		{"Topics/a missing topic is answered, Exists false, and not created", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, missing := k.Topic(t, 1), k.MissingTopic(t)
			got := topics(t, s, topic, missing)
			if info, ok := got[missing]; !ok || info.Exists || len(info.Partitions) != 0 {
				t.Errorf("missing topic: %+v (answered %v), want answered with Exists false", info, ok)
			}
			if !got[topic].Exists {
				t.Errorf("the existing topic asked beside a missing one: %+v", got[topic])
			}
			if again := topics(t, s, missing); again[missing].Exists {
				t.Errorf("asking about the missing topic created it: %+v", again[missing])
			}
		}},
		{"Topics/every topic asked is answered, once", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			a, b := k.Topic(t, 1), k.Topic(t, 2)
			got := topics(t, s, b, a, b)
			if len(got) != 2 || !got[a].Exists || !got[b].Exists || len(got[b].Partitions) != 2 {
				t.Fatalf("Topics(b, a, b) = %+v, want a and b", got)
			}
			if none := topics(t, s); len(none) != 0 {
				t.Errorf("Topics() = %+v, want nothing", none)
			}
		}},
		{"Topics/cancelled context is an error", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic := k.Topic(t, 1)
			if got, err := s.Topics(cancelled(), []string{topic}); err == nil {
				t.Fatalf("Topics with a cancelled context = %+v, no error", got)
			}
		}},
		{"Groups/an unknown group is answered with the zero state", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			g := k.Group(t)
			st, ok := groups(t, s, g)[g]
			if !ok || st.State != "" || st.Members != 0 || len(st.Committed) != 0 || st.Active() {
				t.Fatalf("unknown group: %+v (answered %v), want answered with the zero state", st, ok)
			}
		}},
		{"Groups/committed offsets of an Empty group, uncommitted partitions absent", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, g := k.Topic(t, 3), k.Group(t)
			k.Produce(t, topic, 0, 10)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 0): 7, tp(topic, 2): 0})
			st := groups(t, s, g)[g]
			if st.State != "Empty" || st.Members != 0 || st.Active() {
				t.Errorf("group with commits and no member: %+v, want Empty", st)
			}
			want := map[migrate.TopicPartition]int64{tp(topic, 0): 7, tp(topic, 2): 0}
			if len(st.Committed) != len(want) {
				t.Errorf("committed %v, want %v", st.Committed, want)
			}
			for p, off := range want {
				if got, ok := st.Committed[p]; !ok || got != off {
					t.Errorf("%s: committed %d (present %v), want %d", p, got, ok, off)
				}
			}
		}},
		{"Groups/every group asked is answered", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, a, b := k.Topic(t, 1), k.Group(t), k.Group(t)
			k.Commit(t, a, map[migrate.TopicPartition]int64{tp(topic, 0): 1})
			got := groups(t, s, a, b, a)
			if _, ok := got[b]; len(got) != 2 || !ok || got[a].Committed[tp(topic, 0)] != 1 {
				t.Fatalf("Groups(a, b, a) = %+v, want a with its commit and b", got)
			}
		}},
		{"Groups/a group with a member is Active, and not once it left", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, g := k.Topic(t, 2), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 0): 1})
			leave := k.Join(t, g, topic)
			st := groups(t, s, g)[g]
			if !st.Active() || st.Members < 1 || st.State == "" || st.State == "Empty" || st.State == "Dead" {
				t.Errorf("group with a live member: %+v, want Active with a member", st)
			}
			if st.Committed[tp(topic, 0)] != 1 {
				t.Errorf("group with a live member: committed %v, want its commit", st.Committed)
			}
			leave()
			st = groups(t, s, g)[g]
			if st.Active() || st.Members != 0 || st.Committed[tp(topic, 0)] != 1 {
				t.Errorf("group after its member left: %+v, want inactive, no member, its commit kept", st)
			}
		}},
		{"Groups/the caller owns what it is given", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, g := k.Topic(t, 1), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 0): 1})
			groups(t, s, g)[g].Committed[tp(topic, 0)] = 99
			if got := groups(t, s, g)[g].Committed[tp(topic, 0)]; got != 1 {
				t.Fatalf("committed %d after the caller changed its copy, want 1", got)
			}
		}},
		{"Groups/cancelled context is an error", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			g := k.Group(t)
			if got, err := s.Groups(cancelled(), []string{g}); err == nil {
				t.Fatalf("Groups with a cancelled context = %+v, no error", got)
			}
		}},
		{"ActiveGroups/the active groups of those asked, without their commits", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			topic, empty, joined, unknown := k.Topic(t, 2), k.Group(t), k.Group(t), k.Group(t)
			k.Commit(t, empty, map[migrate.TopicPartition]int64{tp(topic, 0): 3})
			k.Commit(t, joined, map[migrate.TopicPartition]int64{tp(topic, 1): 4})
			leave := k.Join(t, joined, topic)
			defer leave()
			got, err := s.ActiveGroups(ctx(t), []string{empty, joined, unknown, empty})
			if err != nil {
				t.Fatalf("ActiveGroups: %v", err)
			}
			st, ok := got[joined]
			if len(got) != 1 || !ok || !st.Active() || st.Committed != nil || st.Metadata != nil {
				t.Fatalf("ActiveGroups(empty, joined, unknown, empty) = %+v, want the joined group alone, active, without commits", got)
			}
			if want := groups(t, s, joined)[joined].State; st.State != want {
				t.Errorf("ActiveGroups state %q, Groups says %q", st.State, want)
			}
			// A group asked for is answered; one active but not asked is not.
			if got, err := s.ActiveGroups(ctx(t), []string{empty, unknown}); err != nil || len(got) != 0 {
				t.Errorf("ActiveGroups(empty, unknown) = %+v, %v; want none", got, err)
			}
		}},
		{"ActiveGroups/cancelled context is an error", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			g := k.Group(t)
			if got, err := s.ActiveGroups(cancelled(), []string{g}); err == nil {
				t.Fatalf("ActiveGroups with a cancelled context = %+v, no error", got)
			}
		}},
		{"OffsetsRetention/the broker's offsets.retention.minutes", func(t *testing.T, s migrate.KafkaState, k Kafka) {
			got, err := s.OffsetsRetention(ctx(t))
			if err != nil || got != k.Retention() {
				t.Fatalf("OffsetsRetention = %v, %v; want %v", got, err, k.Retention())
			}
		}},
		{"OffsetsRetention/cancelled context is an error", func(t *testing.T, s migrate.KafkaState, _ Kafka) {
			if got, err := s.OffsetsRetention(cancelled()); err == nil {
				t.Fatalf("OffsetsRetention with a cancelled context = %v, no error", got)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) {
			s, k := h(t)
			c.run(t, s, k)
		})
	}
}

// OffsetCommitterHarness returns a committer over a cluster and the means to arrange and read
// it. It is called once per case; the cluster may be shared.
type OffsetCommitterHarness func(t *testing.T) (migrate.OffsetCommitter, Kafka)

// TestOffsetCommitter runs the migrate.OffsetCommitter suite: one subtest per clause of the
// comment of Commit (and of CommitError's).
func TestOffsetCommitter(t *testing.T, h OffsetCommitterHarness) {
	cases := []struct {
		clause string
		run    func(t *testing.T, c migrate.OffsetCommitter, k Kafka)
	}{
		{"one CommitError per partition, in request order; nil means written", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 3), k.Group(t)
			cs := []migrate.Commit{commitOf(topic, 2, 5, "meta-2"), commitOf(topic, 0, 0, ""), commitOf(topic, 1, 1<<40, "meta-1")}
			checkResults(t, commit(t, c, g, cs), cs, nil, nil, nil)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{
				tp(topic, 2): {5, "meta-2"}, tp(topic, 0): {0, ""}, tp(topic, 1): {1 << 40, "meta-1"}})
		}},
		{"a commit replaces the committed offset, backwards too", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 2), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 0): 10, tp(topic, 1): 10})
			cs := []migrate.Commit{commitOf(topic, 0, 3, "back"), commitOf(topic, 1, 12, "on")}
			checkResults(t, commit(t, c, g, cs), cs, nil, nil)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {3, "back"}, tp(topic, 1): {12, "on"}})
		}},
		{"only the partitions asked are written", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 3), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 1): 4})
			cs := []migrate.Commit{commitOf(topic, 0, 2, "")}
			checkResults(t, commit(t, c, g, cs), cs, nil)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {2, ""}, tp(topic, 1): {4, ""}})
		}},
		{"an unknown topic or partition fails alone, wrapping ErrPartitionMissing", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, missing, g := k.Topic(t, 2), k.MissingTopic(t), k.Group(t)
			cs := []migrate.Commit{commitOf(topic, 0, 1, ""), commitOf(missing, 0, 1, ""), commitOf(topic, 7, 1, ""), commitOf(topic, 1, 2, "")}
			checkResults(t, commit(t, c, g, cs), cs, nil, migrate.ErrPartitionMissing, migrate.ErrPartitionMissing, nil)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {1, ""}, tp(topic, 1): {2, ""}})
		}},
		{"a negative offset fails alone", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 2), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 1): 4})
			cs := []migrate.Commit{commitOf(topic, 0, 1, ""), commitOf(topic, 1, -1, "")}
			checkResults(t, commit(t, c, g, cs), cs, nil, errAny)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {1, ""}, tp(topic, 1): {4, ""}})
		}},
		{"a group with a member refuses every partition, wrapping ErrGroupActive", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 2), k.Group(t)
			k.Commit(t, g, map[migrate.TopicPartition]int64{tp(topic, 0): 1, tp(topic, 1): 1})
			leave := k.Join(t, g, topic)
			cs := []migrate.Commit{commitOf(topic, 0, 5, ""), commitOf(topic, 1, 6, "")}
			checkResults(t, commit(t, c, g, cs), cs, migrate.ErrGroupActive, migrate.ErrGroupActive)
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {1, ""}, tp(topic, 1): {1, ""}})
			leave()
			checkResults(t, commit(t, c, g, cs), cs, nil, nil) // Empty again: accepted
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{tp(topic, 0): {5, ""}, tp(topic, 1): {6, ""}})
		}},
		{"nothing to commit: no results, no error", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			g := k.Group(t)
			if res := commit(t, c, g, nil); len(res) != 0 {
				t.Fatalf("Commit of nothing = %v, want no results", res)
			}
		}},
		{"cancelled context fails the group as a whole", func(t *testing.T, c migrate.OffsetCommitter, k Kafka) {
			topic, g := k.Topic(t, 1), k.Group(t)
			_, err := c.Commit(cancelled(), g, []migrate.Commit{commitOf(topic, 0, 1, "")})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Commit with a cancelled context: error %v, want one wrapping context.Canceled", err)
			}
			checkCommitted(t, k, g, map[migrate.TopicPartition]Committed{})
		}},
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) {
			oc, k := h(t)
			c.run(t, oc, k)
		})
	}
}

// errAny stands for "some error" in checkResults.
var errAny = errors.New("any error")

func commitOf(topic string, p int32, off int64, meta string) migrate.Commit {
	return migrate.Commit{TopicPartition: tp(topic, p), Offset: off, Metadata: meta}
}

func commit(t *testing.T, c migrate.OffsetCommitter, group string, cs []migrate.Commit) []migrate.CommitError {
	t.Helper()
	res, err := c.Commit(ctx(t), group, cs)
	if err != nil {
		t.Fatalf("Commit of group %s: %v, want per-partition outcomes", group, err)
	}
	return res
}

// checkResults checks one result per commit, in order, each with the wanted error (nil: none;
// errAny: any; else one wrapping it).
func checkResults(t *testing.T, res []migrate.CommitError, cs []migrate.Commit, want ...error) {
	t.Helper()
	if len(res) != len(cs) {
		t.Fatalf("%d results for %d commits: %v", len(res), len(cs), res)
	}
	for i, r := range res {
		if r.TopicPartition != cs[i].TopicPartition {
			t.Errorf("result %d is for %s, want %s", i, r.TopicPartition, cs[i].TopicPartition)
		}
		switch w := want[i]; {
		case w == nil && r.Err != nil:
			t.Errorf("%s: %v, want written", r.TopicPartition, r.Err)
		case w != nil && r.Err == nil:
			t.Errorf("%s: written, want an error (%v)", r.TopicPartition, w)
		case w != nil && w != errAny && !errors.Is(r.Err, w):
			t.Errorf("%s: %v, want an error wrapping %v", r.TopicPartition, r.Err, w)
		}
	}
}

func checkCommitted(t *testing.T, k Kafka, group string, want map[migrate.TopicPartition]Committed) {
	t.Helper()
	got := k.Committed(t, group)
	if len(got) != len(want) {
		t.Errorf("group %s has committed %v, want %v", group, got, want)
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("group %s %s: committed %+v (present %v), want %+v", group, p, g, ok, w)
		}
	}
}

func topics(t *testing.T, s migrate.KafkaState, names ...string) map[string]migrate.TopicInfo {
	t.Helper()
	got, err := s.Topics(ctx(t), names)
	if err != nil {
		t.Fatalf("Topics(%q): %v", names, err)
	}
	return got
}

func groups(t *testing.T, s migrate.KafkaState, names ...string) map[string]migrate.GroupState {
	t.Helper()
	got, err := s.Groups(ctx(t), names)
	if err != nil {
		t.Fatalf("Groups(%q): %v", names, err)
	}
	return got
}

func checkTopic(t *testing.T, name string, got migrate.TopicInfo, want map[int32]migrate.PartitionRange) {
	t.Helper()
	if !got.Exists || len(got.Partitions) != len(want) {
		t.Fatalf("topic %s: %+v, want existing with partitions %v", name, got, want)
	}
	for p, r := range want {
		if g, ok := got.Partitions[p]; !ok || g != r {
			t.Errorf("topic %s partition %d: %+v (present %v), want %+v", name, p, g, ok, r)
		}
	}
}
