package mirror

import (
	"maps"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestOffsetTable(t *testing.T) {
	tp := func(topic string, p int32) migrate.TopicPartition {
		return migrate.TopicPartition{Topic: topic, Partition: p}
	}
	cases := []struct {
		name   string
		m      map[migrate.TopicPartition]int64
		absent []migrate.TopicPartition
	}{
		{name: "empty", absent: []migrate.TopicPartition{tp("t", 0)}},
		{name: "one", m: map[migrate.TopicPartition]int64{tp("t", 0): 7}, absent: []migrate.TopicPartition{tp("t", 1), tp("u", 0)}},
		{name: "topics and partitions out of order",
			m:      map[migrate.TopicPartition]int64{tp("b", 10): 1, tp("a", 2): 0, tp("b", 9): 5, tp("a", 10): 3, tp("c", 0): 9},
			absent: []migrate.TopicPartition{tp("a", 3), tp("b", 0), tp("", 0), tp("d", 0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab := tableOf(tc.m)
			for k, want := range tc.m {
				if got, ok := tab.get(k); !ok || got != want {
					t.Errorf("get(%v) = %d, %v; want %d", k, got, ok, want)
				}
			}
			for _, k := range tc.absent {
				if got, ok := tab.get(k); ok {
					t.Errorf("get(%v) = %d, found; want absent", k, got)
				}
			}
			if back := tab.toMap(); !maps.Equal(back, tc.m) {
				t.Errorf("toMap = %v, want %v", back, tc.m)
			}
			if !tab.equal(tc.m) {
				t.Errorf("equal(its own map) = false")
			}
			changed := maps.Clone(tc.m)
			if changed == nil {
				changed = map[migrate.TopicPartition]int64{}
			}
			changed[tp("t", 0)]++
			if tab.equal(changed) {
				t.Errorf("equal(%v) = true for a table of %v", changed, tc.m)
			}
		})
	}
}
