package e2e_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestNamesAtKafkaLimits migrates names at the edge of what Kafka holds, end to end: a topic of
// exactly 249 characters (Kafka's limit) made of letters, digits, dots, dashes and underscores,
// and groups with dots, dashes, underscores, unicode and 249+ characters (Kafka limits group
// ids only by its string encoding). Every offset must land exactly, as Kafka's own
// consumer-groups tool shows; the names Kafka cannot hold are in TestBadInputCorpus.
func TestNamesAtKafkaLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := stacktest.Name(t, "t.a_b-")
	topic := e.namedTopic(base+strings.Repeat("._-x", 60)[:249-len(base)], 10, 10)
	if len(topic) != 249 {
		t.Fatalf("topic name of %d characters, want 249", len(topic))
	}
	groups := map[string]map[int32]int64{
		e.named("g.dots.and-dashes_and_underscores"): {0: 3, 1: 4},
		e.named("grüppe-消费者-ü"):                      {0: 5, 1: 6},
		e.named(strings.Repeat("long.group-", 30)):   {0: 7, 1: 10},
	}
	for g, offsets := range groups {
		e.zkOffsets(g, topic, offsets)
	}
	e.mustCLI(0, "migrate", "copy", "--execute", "--backup", e.file("backup"))
	for g, offsets := range groups {
		if got, w := e.offsets(g), want(topic, offsets); !maps.Equal(got, w) {
			t.Errorf("group %q: kafka holds %v, want %v", g, got, w)
		}
		if got, w := e.st.DescribeOffsets(t, g), want(topic, offsets); !maps.Equal(got, w) {
			t.Errorf("consumer-groups --describe %q: %v, want %v", g, got, w)
		}
	}
	// A second copy finds everything equal.
	r := e.mustCLI(0, "migrate", "copy", "--execute", "--backup", e.file("backup-again"), "-o", "json")
	if n := decodeJSON[copyDoc](t, r).Counts; len(n) != 0 {
		t.Errorf("second copy: counts %v, want nothing to do", n)
	}
}

// named is a group name made unique to this run, deleted from Kafka at the end.
func (e *env) named(prefix string) string {
	g := prefix + "-" + stacktest.Name(e.t, "")[1:]
	e.deleteGroupAtEnd(g)
	return g
}
