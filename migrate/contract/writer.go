package contract

import (
	"maps"
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LegacyOffsetWriterHarness returns a writer over a legacy tree of its own, empty (no
// /consumers), and the means to arrange and read that tree. It is called once per case.
type LegacyOffsetWriterHarness func(t *testing.T) (migrate.LegacyOffsetWriter, Legacy)

// TestLegacyOffsetWriter runs the migrate.LegacyOffsetWriter suite: one subtest per clause of
// the comment of AdvanceOffsets.
func TestLegacyOffsetWriter(t *testing.T, h LegacyOffsetWriterHarness) {
	cases := []struct {
		clause string
		run    func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy)
	}{
		{"a smaller valid offset is moved forward", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 5)
			l.SetOffset(t, "g", "t", 1, 0)
			left := advance(t, w, "g", map[migrate.TopicPartition]int64{tp("t", 0): 9, tp("t", 1): 1})
			checkLeft(t, left)
			checkZnode(t, l, "g", "t", 0, "9")
			checkZnode(t, l, "g", "t", 1, "1")
		}},
		{"a missing znode of an existing group is created", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 5)
			left := advance(t, w, "g", map[migrate.TopicPartition]int64{tp("t", 3): 7, tp("new-topic", 0): 2})
			checkLeft(t, left)
			checkZnode(t, l, "g", "t", 3, "7")
			checkZnode(t, l, "g", "new-topic", 0, "2")
			checkZnode(t, l, "g", "t", 0, "5")
		}},
		{"a group without offsets yet gets them", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.CreateGroup(t, "g")
			checkLeft(t, advance(t, w, "g", map[migrate.TopicPartition]int64{tp("t", 0): 4}))
			checkZnode(t, l, "g", "t", 0, "4")
		}},
		{"an equal or larger offset is left alone, with why", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 5)
			l.SetOffset(t, "g", "t", 1, 8)
			l.SetOffset(t, "g", "t", 2, 1)
			left := advance(t, w, "g", map[migrate.TopicPartition]int64{tp("t", 0): 5, tp("t", 1): 6, tp("t", 2): 2})
			checkLeft(t, left, tp("t", 0), tp("t", 1))
			checkZnode(t, l, "g", "t", 0, "5")
			checkZnode(t, l, "g", "t", 1, "8")
			checkZnode(t, l, "g", "t", 2, "2")
		}},
		{"a znode that holds no valid offset is left alone, with why", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			kinds := []Bad{BadSentinel, BadEmpty, BadText}
			want := map[migrate.TopicPartition]int64{}
			before := map[int32]string{}
			for i, bad := range kinds {
				l.SetBad(t, "g", "t", int32(i), bad)
				want[tp("t", int32(i))] = 10
				data, ok := l.Read(t, "g", "t", int32(i))
				if !ok {
					t.Fatalf("znode t/%d (%v) not there after it was set", i, bad)
				}
				before[int32(i)] = data
			}
			left := advance(t, w, "g", want)
			checkLeft(t, left, slices.Collect(maps.Keys(want))...)
			for p, data := range before {
				checkZnode(t, l, "g", "t", p, data)
			}
		}},
		{"a group missing from the store is not created again", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "gone", "t", 0, 1)
			l.DeleteGroup(t, "gone")
			left := advance(t, w, "gone", map[migrate.TopicPartition]int64{tp("t", 0): 5, tp("t", 1): 6})
			checkLeft(t, left, tp("t", 0), tp("t", 1))
			if l.GroupExists(t, "gone") {
				t.Errorf("the deleted group exists again after AdvanceOffsets")
			}
			if _, err := w.AdvanceOffsets(ctx(t), "never", map[migrate.TopicPartition]int64{tp("t", 0): 1}); err != nil {
				t.Errorf("a group that never existed: %v, want its partitions left alone", err)
			}
			if l.GroupExists(t, "never") {
				t.Errorf("a group that never existed was created by AdvanceOffsets")
			}
		}},
		{"other partitions of the group are not touched", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.SetOffset(t, "g", "t", 1, 1)
			l.SetOffset(t, "other", "t", 0, 1)
			checkLeft(t, advance(t, w, "g", map[migrate.TopicPartition]int64{tp("t", 0): 3}))
			checkZnode(t, l, "g", "t", 1, "1")
			checkZnode(t, l, "other", "t", 0, "1")
		}},
		{"cancelled context is an error", func(t *testing.T, w migrate.LegacyOffsetWriter, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			if _, err := w.AdvanceOffsets(cancelled(), "g", map[migrate.TopicPartition]int64{tp("t", 0): 3}); err == nil {
				t.Fatal("AdvanceOffsets with a cancelled context: no error")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) {
			w, l := h(t)
			c.run(t, w, l)
		})
	}
}

func advance(t *testing.T, w migrate.LegacyOffsetWriter, group string, offsets map[migrate.TopicPartition]int64) map[migrate.TopicPartition]string {
	t.Helper()
	left, err := w.AdvanceOffsets(ctx(t), group, offsets)
	if err != nil {
		t.Fatalf("AdvanceOffsets(%s, %v): %v", group, offsets, err)
	}
	return left
}

// checkLeft checks that exactly the given partitions were left alone, each with a reason.
func checkLeft(t *testing.T, left map[migrate.TopicPartition]string, want ...migrate.TopicPartition) {
	t.Helper()
	if len(left) != len(want) {
		t.Errorf("left alone %v, want exactly %v", left, want)
	}
	for _, p := range want {
		if why, ok := left[p]; !ok || why == "" {
			t.Errorf("%s: left alone %v with reason %q, want left alone with why", p, ok, why)
		}
	}
}

func checkZnode(t *testing.T, l Legacy, group, topic string, p int32, want string) {
	t.Helper()
	got, ok := l.Read(t, group, topic, p)
	if !ok || got != want {
		t.Errorf("znode %s/%s/%d holds %q (exists %v), want %q", group, topic, p, got, ok, want)
	}
}
