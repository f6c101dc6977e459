package planfile

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// strictGroup decodes raw the standard, strict way: what a group read when decodeGroup gives way.
func strictGroup(raw []byte) (migrate.GroupPlan, error) {
	var g migrate.GroupPlan
	if err := checkSyntax(raw); err != nil {
		return g, err
	}
	s := planScanner{known: planFieldNames}
	err := s.strict("$.groups[0]", raw, &g)
	return g, err
}

// TestDecodeGroupReadsWhatPlanWrites: every group plan writes in plain ASCII is read by
// decodeGroup itself, as the standard decoder reads it; a group with escapes is left to the
// standard decoder.
func TestDecodeGroupReadsWhatPlanWrites(t *testing.T) {
	// A field added to GroupPlan or Entry must be read by decodeGroup too, or every plan file
	// goes the slow way.
	if n := reflect.TypeFor[migrate.GroupPlan]().NumField(); n != 7 {
		t.Fatalf("GroupPlan has %d fields, decodeGroup reads 7: add the new one", n)
	}
	if n := reflect.TypeFor[migrate.Entry]().NumField(); n != 14 {
		t.Fatalf("Entry has %d fields, decodeGroup reads 14: add the new one", n)
	}
	i64 := func(v int64) *int64 { return &v }
	full := migrate.Entry{Topic: "orders", Partition: 7, Class: migrate.ClassZKAhead, Action: migrate.ActionWrite,
		Reason: "ZooKeeper 12 ahead of Kafka 10", ZK: i64(12), Kafka: i64(10), LogStart: i64(0), LogEnd: i64(20), Target: 12,
		Znode: "/consumers/g/offsets/orders/7", Mtime: time.Date(2026, 12, 7, 6, 13, 31, 437000000, time.UTC), Suspect: "rewound",
		Source: &migrate.Source{Topic: "src-orders", Offset: 1050, MaxReread: 49}}
	tests := []struct {
		name string
		g    migrate.GroupPlan
		fast bool
	}{
		{"every field", migrate.GroupPlan{Group: "g", KafkaGroup: "k", KafkaState: "Empty", KafkaMembers: 2,
			LiveConsumers: []string{"c1", "c2"}, Gates: []migrate.Gate{migrate.GateLegacyConsumersAlive}, Entries: []migrate.Entry{full, full}}, true},
		{"no entries", migrate.GroupPlan{Group: "g", KafkaState: "Dead", Entries: []migrate.Entry{}}, true},
		{"nil entries", migrate.GroupPlan{Group: "g"}, true},
		{"bare entry", migrate.GroupPlan{Group: "g", Entries: []migrate.Entry{{Topic: "t"}}}, true},
		{"extreme numbers", migrate.GroupPlan{Group: "g", KafkaMembers: -1, Entries: []migrate.Entry{{Partition: -1 << 31, Target: -1 << 63,
			ZK: i64(1<<63 - 1), Mtime: time.Unix(0, 1).In(time.FixedZone("x", 3600))}}}, true},
		{"escaped name", migrate.GroupPlan{Group: `a"b`, Entries: []migrate.Entry{}}, false},
		{"html escape", migrate.GroupPlan{Group: "a<b", Entries: []migrate.Entry{}}, false},
		{"non-ASCII topic", migrate.GroupPlan{Group: "g", Entries: []migrate.Entry{{Topic: "ü"}}}, false},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		tests = append(tests, struct {
			name string
			g    migrate.GroupPlan
			fast bool
		}{fmt.Sprintf("random %d", i), randomPlainGroup(r), true})
	}
	for _, tt := range tests {
		raw, err := json.MarshalIndent(tt.g, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got migrate.GroupPlan
		if fast := decodeGroup(raw, &got, &interned{}); fast != tt.fast {
			t.Fatalf("%s: decodeGroup read it itself: %v, want %v\n%s", tt.name, fast, tt.fast, raw)
		}
		if !tt.fast {
			continue
		}
		want, err := strictGroup(raw)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodeGroup = %+v\nwant %+v", tt.name, got, want)
		}
	}
}

func randomPlainGroup(r *rand.Rand) migrate.GroupPlan {
	pick := func(ss ...string) string { return ss[r.IntN(len(ss))] }
	ptr := func() *int64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := r.Int64N(1 << 40)
		return &v
	}
	g := migrate.GroupPlan{Group: pick("g", "group-0001"), KafkaGroup: pick("", "renamed"), KafkaState: pick("", "Empty", "Stable"),
		KafkaMembers: r.IntN(3)}
	if r.IntN(4) == 0 {
		g.LiveConsumers = []string{pick("c1", "host-1")}
	}
	if r.IntN(4) == 0 {
		g.Gates = []migrate.Gate{migrate.GateKafkaGroupActive}
	}
	for range r.IntN(4) {
		g.Entries = append(g.Entries, migrate.Entry{Topic: pick("t", "orders"), Partition: r.Int32N(100),
			Class: migrate.Class(pick("equal", "zk-only")), Action: migrate.Action(pick("write", "skip", "block")),
			Reason: pick("", "ZooKeeper 1; Kafka already equal at 1"), ZK: ptr(), Kafka: ptr(), LogStart: ptr(), LogEnd: ptr(),
			Target: r.Int64N(1 << 40), Znode: pick("/consumers/g/offsets/t/0", ""), Mtime: time.UnixMilli(r.Int64N(1 << 42)).UTC(),
			Suspect: pick("", "", "rewound")})
		if r.IntN(3) == 0 {
			g.Entries[len(g.Entries)-1].Source = &migrate.Source{Topic: pick("orders", "t"), Offset: r.Int64N(1 << 40), MaxReread: r.Int64N(100)}
		}
	}
	return g
}

// FuzzDecodeGroup holds decodeGroup to the standard strict decode on any input: whatever it
// reads itself, the standard decoder reads too, to the same value.
func FuzzDecodeGroup(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		raw, err := json.MarshalIndent(randomPlainGroup(r), "", " ")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, s := range []string{
		`{"group":"g","group":"h"}`, `{"group":null,"entries":null}`, `{"entries":[{"partition":01}]}`,
		`{"entries":[{"partition":1.0}]}`, `{"entries":[{"partition":2147483648}]}`, `{"kafka_members":1e2}`,
		`{"entries":[{"zk_mtime":"2026-13-01T00:00:00Z"}]}`, `{"entries":[{"zk_mtime":null,"zk_offset":null}]}`,
		`{"gates":[null]}`, `{"Group":"g"}`, `{"group":"g"} x`, `{"group":"g",}`, `{"entries":[{}],}`,
		`{"live_legacy_consumers":[]}`, `{"entries":[{"topic":"t"}{"topic":"u"}]}`, ` {"group" : "g" } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got migrate.GroupPlan
		if !decodeGroup(raw, &got, &interned{}) {
			return
		}
		want, err := strictGroup(raw)
		if err != nil {
			t.Fatalf("decodeGroup read what the standard decoder refuses (%v):\n%s", err, raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeGroup = %+v\nstandard = %+v\ninput:\n%s", got, want, strings.TrimSpace(string(raw)))
		}
	})
}
