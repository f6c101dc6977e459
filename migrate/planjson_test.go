package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendGroupIndent holds the hand-written encoder to json.MarshalIndent, byte for byte,
// on groups with every optional field set and unset, strings encoding/json escapes, and a
// thousand random groups.
func TestAppendGroupIndent(t *testing.T) {
	// A field added to GroupPlan or Entry must be written by appendGroupIndent too.
	if n := reflect.TypeFor[GroupPlan]().NumField(); n != 7 {
		t.Fatalf("GroupPlan has %d fields, appendGroupIndent writes 7: add the new one", n)
	}
	if n := reflect.TypeFor[Entry]().NumField(); n != 14 {
		t.Fatalf("Entry has %d fields, appendGroupIndent writes 14: add the new one", n)
	}
	i64 := func(v int64) *int64 { return &v }
	mtime := time.Date(2026, 12, 7, 6, 13, 31, 437000000, time.UTC)
	full := Entry{Topic: "orders", Partition: 7, Class: ClassZKAhead, Action: ActionWrite, Reason: "ZooKeeper 12 ahead of Kafka 10",
		ZK: i64(12), Kafka: i64(10), LogStart: i64(0), LogEnd: i64(20), Target: 12, Znode: "/consumers/g/offsets/orders/7",
		Mtime: mtime, Suspect: "written within the hour", Source: &Source{Topic: "src<orders>", Offset: 1050, MaxReread: 49,
			Blocked: ClassNoSync, Reason: "not written"}}
	groups := map[string]GroupPlan{
		"every field": {Group: "g", KafkaGroup: "k", KafkaState: "Empty", KafkaMembers: 2, LiveConsumers: []string{"c1", "c2"},
			Gates: []Gate{GateLegacyConsumersAlive, GateKafkaGroupActive}, Entries: []Entry{full, full}},
		"no entries":    {Group: "g", KafkaState: "Dead", Entries: []Entry{}},
		"nil entries":   {Group: "g"},
		"bare entry":    {Group: "g", Entries: []Entry{{Topic: "t", Mtime: time.Time{}}}},
		"escaped":       {Group: "a\"b\\c<d>&e\u2028é\x01", KafkaState: "\t", Entries: []Entry{{Topic: "ü", Reason: "x < y & z", Znode: "\xff\xfe"}}},
		"negative ints": {Group: "g", KafkaMembers: -1, Entries: []Entry{{Partition: -1, Target: -5, ZK: i64(-2), Mtime: time.Unix(0, 1).In(time.FixedZone("x", 3600))}}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		groups[fmt.Sprintf("random %d", i)] = randomGroup(r)
	}
	for name, g := range groups {
		for _, prefix := range []string{"", "  ", "    "} {
			want, err := json.MarshalIndent(g, prefix, "  ")
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendGroupIndent(nil, g, prefix)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, prefix %q: appendGroupIndent = (err %v)\n%s\nwant\n%s", name, prefix, err, got, want)
			}
		}
	}
}

func randomGroup(r *rand.Rand) GroupPlan {
	pick := func(ss ...string) string { return ss[r.IntN(len(ss))] }
	ptr := func() *int64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := r.Int64N(1 << 40)
		return &v
	}
	g := GroupPlan{Group: pick("g", "group-0001", "a&b"), KafkaGroup: pick("", "renamed"), KafkaState: pick("", "Empty", "Stable"),
		KafkaMembers: r.IntN(3)}
	if r.IntN(4) == 0 {
		g.LiveConsumers = []string{pick("c1", "host<1>")}
	}
	if r.IntN(4) == 0 {
		g.Gates = []Gate{GateLegacyConsumersAlive}
	}
	for range r.IntN(4) {
		g.Entries = append(g.Entries, Entry{Topic: pick("t", "orders"), Partition: r.Int32N(100), Class: Class(pick("equal", "zk-only")),
			Action: Action(pick("write", "skip", "block")), Reason: pick("", "ZooKeeper 1; Kafka already equal at 1"),
			ZK: ptr(), Kafka: ptr(), LogStart: ptr(), LogEnd: ptr(), Target: r.Int64N(1 << 40), Znode: pick("/consumers/g/offsets/t/0", ""),
			Mtime: time.UnixMilli(r.Int64N(1 << 42)).UTC(), Suspect: pick("", "", "rewound")})
		if r.IntN(3) == 0 {
			g.Entries[len(g.Entries)-1].Source = &Source{Topic: pick("orders", "a&b"), Offset: r.Int64N(1 << 40), MaxReread: r.Int64N(100)}
		}
	}
	return g
}
