package migrate

import (
	"math"
	"strings"
)

// gateBlockPrefix starts the reason of an entry that only its group's gates block (Build turns
// its write into a block): no other reason starts so.
const gateBlockPrefix = "blocked by "

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
	// Own counts, per class, the blocked partitions that block on their own (out of the log, a
	// missing topic or partition, an invalid znode, a difference under --on-conflict=fail),
	// not only by the group's gates: those need a decision, a gate needs the consumers gone.
	Own map[Class]int
}

// OwnBlocks is the number of partitions in Own.
func (c GroupCounts) OwnBlocks() int {
	n := 0
	for _, v := range c.Own {
		n += v
	}
	return n
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
			if len(gp.Gates) == 0 || !strings.HasPrefix(e.Reason, gateBlockPrefix) {
				if c.Own == nil {
					c.Own = map[Class]int{}
				}
				c.Own[e.Class]++
			}
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
