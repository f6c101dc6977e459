package e2e_test

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestPlanSummaryOnTheRealStack: a real legacy registration of one consumer owning all four
// partitions (ids/<id> and four owners/<t>/<p>) is one consumer, named once per group, not on
// every partition row; the per-group summary puts the group with an offset above the log end
// (blocked on its own) before the gated one; plan closes with its line on stderr.
func TestPlanSummaryOnTheRealStack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := e.topic(10, 10, 10, 10)
	live, above := e.group(), e.group()
	e.zkOffsets(live, topic, map[int32]int64{0: 1, 1: 2, 2: 3, 3: 4})
	e.zkOffsets(above, topic, map[int32]int64{0: 5, 1: 50})
	id := live + "_host-1700000000000-abcdef12"
	unregister, err := e.zr.RegisterLiveConsumer(e.ctx(), live, id,
		[]migrate.TopicPartition{tp(topic, 0), tp(topic, 1), tp(topic, 2), tp(topic, 3)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unregister(); err != nil {
			t.Error(err)
		}
	}()
	sel := []string{"--group", live + "," + above}

	r := e.mustCLI(2, append([]string{"migrate", "plan", "-o", "table"}, sel...)...)
	if n := strings.Count(r.stdout, id); n != 1 {
		t.Errorf("the consumer is named %d times in the table, want once (the group's line):\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stdout, "legacy-consumers-alive (1 live legacy consumer)") ||
		!strings.Contains(r.stdout, "legacy-consumers-alive (1 live legacy consumer: "+id+")") {
		t.Errorf("the table does not count 1 consumer (5 registrations):\n%s", r.stdout)
	}

	r = e.mustCLI(2, append([]string{"migrate", "plan", "-o", "summary"}, sel...)...)
	var rows []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "│ "+live) || strings.HasPrefix(l, "│ "+above) {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || !strings.Contains(rows[0], above) || !strings.Contains(rows[0], "above-log-end 1") ||
		!strings.Contains(rows[1], "legacy-consumers-alive: 1 consumer ") {
		t.Errorf("summary rows %q: want %s (above-log-end 1) first, then %s with 1 consumer\n%s", rows, above, live, r.stdout)
	}
	// Lag: live 4 partitions at 1..4 of 10: 9+8+7+6 = 30; above: 10-5 = 5, and 50 > 10 adds 0.
	if !strings.Contains(rows[len(rows)-1], " 30 │") {
		t.Errorf("the gated group's lag is not 30: %q", rows[len(rows)-1])
	}
	if !strings.Contains(r.stderr, "plan: 6 offsets in 2 groups read in ") || !strings.Contains(r.stderr, "1 write, 0 skip, 5 block") {
		t.Errorf("plan's closing line missing:\n%s", r.stderr)
	}
}
