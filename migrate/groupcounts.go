package migrate

import "math"

// GroupCounts is one group's line of a per-group view of a plan: what a person reads first
// when a plan has too many partitions to read one by one.
type GroupCounts struct {
	Group      string
	Partitions int
	Write      int
	Skip       int
	Block      int
	Gates      []Gate
	// Lag is the group's lag to the log end as ZooKeeper has it: the sum, over its partitions
	// with a usable ZooKeeper offset (after --offset-adjust) and a known log end, of
	// logEnd - zk, each at least 0. It is what Kafka's consumer-groups tool would show as LAG
	// for the legacy consumers' offsets: what the group has left to read, wherever it resumes.
	// A partition of a missing topic or partition, or an invalid znode, adds nothing: LagParts
	// counts the partitions that do. The sum stops at math.MaxInt64.
	Lag      int64
	LagParts int
}

// CountGroup counts one planned group.
func CountGroup(gp GroupPlan) GroupCounts {
	c := GroupCounts{Group: gp.Group, Partitions: len(gp.Entries), Gates: gp.Gates}
	for _, e := range gp.Entries {
		switch e.Action {
		case ActionWrite:
			c.Write++
		case ActionSkip:
			c.Skip++
		case ActionBlock:
			c.Block++
		}
		if e.ZK == nil || e.LogEnd == nil {
			continue
		}
		c.LagParts++
		if d := *e.LogEnd - *e.ZK; d > 0 {
			if c.Lag > math.MaxInt64-d {
				c.Lag = math.MaxInt64
			} else {
				c.Lag += d
			}
		}
	}
	return c
}
