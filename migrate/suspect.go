package migrate

import (
	"fmt"
	"time"
)

// A suspect offset is a valid number that a legacy client may have written by mistake. It is
// flagged, never blocked: the plan says what it saw, the operator decides. The known case is
// kafka-node 2.6.1 against a Kafka 3.x broker: given a fetch of several record batches it
// delivers the log, then its start again, and commits the rewound position to ZooKeeper
// (docs/legacy-clients.md; TestKafkaNodeRewindIsFlagged runs it). An active consumer otherwise
// keeps its offset near the log end. So: written recently (the consumer is active), yet far
// below the log end (more than half the retained log, and at least SuspectMinLag records).
const (
	// SuspectWindow is how recent a znode's mtime must be, before the plan, to count as written
	// by an active consumer.
	SuspectWindow = time.Hour
	// SuspectMinLag keeps small logs, where any lag is a large share, out of it.
	SuspectMinLag = 100
)

// flagSuspect sets e.Suspect when its ZooKeeper offset was written within SuspectWindow of now
// and lies further below the log end than half the retained log (and SuspectMinLag).
func flagSuspect(e *Entry, now time.Time) {
	if e.ZK == nil || e.LogEnd == nil || e.LogStart == nil || e.Mtime.IsZero() {
		return
	}
	age := now.Sub(e.Mtime)
	lag, size := *e.LogEnd-*e.ZK, *e.LogEnd-*e.LogStart
	if age < -SuspectWindow || age > SuspectWindow || lag < SuspectMinLag || 2*lag <= size {
		return
	}
	e.Suspect = fmt.Sprintf("written %s before the plan, yet %d records behind the log end %d (of %d retained): "+
		"an active consumer keeps near the end; a client that rewound (as kafka-node 2.6.1 does against Kafka 3.x) or one re-reading on purpose",
		age.Round(time.Second), lag, *e.LogEnd, size)
}
