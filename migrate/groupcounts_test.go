package migrate_test

import (
	"math"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
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

// A gated group's partitions blocked only by the gate are not its own problems; one out of
// the log is, gate or not.
func TestCountGroupOwnBlocks(t *testing.T) {
	in := migratetest.GateInputs([]string{"ids/c1"}, "Empty", 0) // p0, p1 writes blocked by the gate; p4 below log start
	gp := migratetest.MustBuild(t, in, migrate.DefaultPolicy()).Groups[0]
	c := migrate.CountGroup(gp)
	if c.Block != 3 || c.OwnBlocks() != 1 || c.Own[migrate.ClassBelowLogStart] != 1 {
		t.Errorf("gated: block %d, own %v; want 3 blocked, 1 own below-log-start", c.Block, c.Own)
	}
	gp = migratetest.MustBuild(t, migratetest.GateInputs(nil, "Empty", 0), migrate.DefaultPolicy()).Groups[0]
	if c := migrate.CountGroup(gp); c.Block != 1 || c.OwnBlocks() != 1 {
		t.Errorf("ungated: block %d, own %v; want 1 and 1", c.Block, c.Own)
	}
}
