package migrate_test

import (
	"math"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestCountGroup(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	e := func(a migrate.Action, zk, end *int64) migrate.Entry {
		return migrate.Entry{Topic: "t", Action: a, ZK: zk, LogEnd: end}
	}
	cases := []struct {
		name    string
		entries []migrate.Entry
		want    migrate.GroupCounts
	}{
		{"empty group", nil, migrate.GroupCounts{Group: "g"}},
		{"actions counted, lag summed", []migrate.Entry{
			e(migrate.ActionWrite, p(10), p(100)), e(migrate.ActionSkip, p(100), p(100)), e(migrate.ActionBlock, p(5), p(7)),
		}, migrate.GroupCounts{Group: "g", Partitions: 3, Write: 1, Skip: 1, Block: 1, Lag: 92, LagParts: 3}},
		{"above the log end adds 0, not a negative lag", []migrate.Entry{
			e(migrate.ActionBlock, p(150), p(100)), e(migrate.ActionWrite, p(90), p(100)),
		}, migrate.GroupCounts{Group: "g", Partitions: 2, Write: 1, Block: 1, Lag: 10, LagParts: 2}},
		{"no log end or no usable offset: not counted", []migrate.Entry{
			e(migrate.ActionBlock, p(5), nil), e(migrate.ActionBlock, nil, p(9)),
		}, migrate.GroupCounts{Group: "g", Partitions: 2, Block: 2}},
		{"the sum stops at MaxInt64", []migrate.Entry{
			e(migrate.ActionSkip, p(0), p(math.MaxInt64)), e(migrate.ActionSkip, p(0), p(math.MaxInt64)),
		}, migrate.GroupCounts{Group: "g", Partitions: 2, Skip: 2, Lag: math.MaxInt64, LagParts: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := migrate.CountGroup(migrate.GroupPlan{Group: "g", Entries: tc.entries})
			if got.Group != tc.want.Group || got.Partitions != tc.want.Partitions || got.Write != tc.want.Write ||
				got.Skip != tc.want.Skip || got.Block != tc.want.Block || got.Lag != tc.want.Lag || got.LagParts != tc.want.LagParts {
				t.Errorf("CountGroup = %+v, want %+v", got, tc.want)
			}
		})
	}
}
