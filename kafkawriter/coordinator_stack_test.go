package kafkawriter

import (
	"fmt"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// TestCoordinatorFromMetadata: the coordinator computed from __consumer_offsets metadata is the
// one FindCoordinator names, for many groups, and the computed path is the one taken (a nil
// there would fall back to FindCoordinator silently). Which partition holds a group is checked
// against Kafka's own hash in TestOffsetsPartition, and against where the broker really
// appends a commit in offsetlog's tests.
func TestCoordinatorFromMetadata(t *testing.T) {
	c, _ := openStack(t)
	ctx := testCtx(t, time.Minute)
	for i := range 60 {
		g := fmt.Sprintf("coordinator-test-%d", i)
		sc := c.forGroup(g)
		computed := offsetsLeader(ctx, sc, g)
		if computed == nil {
			t.Fatalf("group %q: no coordinator from the metadata of %s", g, kafkaconn.OffsetsTopic)
		}
		if err := sc.RefreshCoordinator(g); err != nil {
			t.Fatalf("group %q: FindCoordinator: %v", g, err)
		}
		found, err := sc.Coordinator(g)
		if err != nil {
			t.Fatalf("group %q: FindCoordinator: %v", g, err)
		}
		if computed.ID() != found.ID() {
			t.Errorf("group %q: computed coordinator %d, FindCoordinator says %d", g, computed.ID(), found.ID())
		}
		got, err := c.coordinator(ctx, g, false)
		if err != nil || got.ID() != found.ID() {
			t.Errorf("group %q: coordinator() = %v, %v; want broker %d", g, got, err, found.ID())
		}
	}
}
