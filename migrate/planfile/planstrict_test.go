package planfile_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// jsonEdit changes the generic JSON form of the base plan (see basePlan: group "g", entries
// t/0 zk-only write, t/1 zk-ahead write, t/2 equal skip, t/3 kafka-ahead skip, t/4 below-log-start block).
type jsonEdit func(plan map[string]any)

func group0(m map[string]any) map[string]any { return m["groups"].([]any)[0].(map[string]any) }
func entry(m map[string]any, i int) map[string]any {
	return group0(m)["entries"].([]any)[i].(map[string]any)
}

func TestDecodePlanRejects(t *testing.T) {
	at := func(p int) string { return `group "g" topic "t" partition ` + string(rune('0'+p)) }
	tests := []struct {
		name string
		edit jsonEdit
		want []string
	}{
		{"schema version", func(m map[string]any) { m["schema_version"] = 3 }, []string{"schema_version 3", "expected 2"}},
		{"no schema version", func(m map[string]any) { delete(m, "schema_version") }, []string{"schema_version 0"}},
		{"unknown top-level field", func(m map[string]any) { m["extra"] = 1 }, []string{`unknown field "extra"`}},
		{"unknown entry field", func(m map[string]any) { entry(m, 0)["force"] = true }, []string{`unknown field "force"`}},
		{"field of another level", func(m map[string]any) { entry(m, 0)["schema_version"] = 1 }, []string{"unknown field"}},
		{"field name in another case", func(m map[string]any) {
			e := entry(m, 2)
			e["Action"] = e["action"]
			delete(e, "action")
		}, []string{`unknown field "Action"`}},
		{"unknown class", func(m map[string]any) { entry(m, 0)["class"] = "weird" }, []string{at(0), `unknown class "weird"`}},
		{"unknown action", func(m map[string]any) { entry(m, 0)["action"] = "force" }, []string{at(0), `unknown action "force"`}},
		{"write without zk offset", func(m map[string]any) { entry(m, 1)["zk_offset"] = nil }, []string{at(1), "needs a zk_offset"}},
		{"negative partition", func(m map[string]any) { entry(m, 2)["partition"] = -1 }, []string{"partition -1", "negative partition"}},
		{"partition beyond int32", func(m map[string]any) { entry(m, 2)["partition"] = 1 << 31 }, []string{"partition"}},
		{"duplicate entry", func(m map[string]any) {
			g := group0(m)
			g["entries"] = append(g["entries"].([]any), entry(m, 2))
		}, []string{at(2), "appears twice"}},
		{"duplicate group", func(m map[string]any) { m["groups"] = append(m["groups"].([]any), group0(m)) }, []string{`group "g" appears twice`}},
		{"empty group name", func(m map[string]any) { group0(m)["group"] = "" }, []string{"empty name"}},
		{"empty topic", func(m map[string]any) { entry(m, 2)["topic"] = "" }, []string{"empty topic"}},
		{"unknown policy", func(m map[string]any) { m["policy"].(map[string]any)["on_conflict"] = "newest" }, []string{"on-conflict", "newest"}},
		{"bad fingerprint", func(m map[string]any) { m["fingerprint"] = "md5:abc" }, []string{"fingerprint"}},
		{"upper-case fingerprint", func(m map[string]any) {
			m["fingerprint"] = strings.ToUpper(m["fingerprint"].(string)[:7]) + m["fingerprint"].(string)[7:]
		}, []string{"fingerprint"}},
		{"no created_at", func(m map[string]any) { delete(m, "created_at") }, []string{"created_at"}},
		{"bad filter", func(m map[string]any) { m["filter"].(map[string]any)["group_regex"] = "(" }, []string{"--group-regex"}},
		{"unknown gate", func(m map[string]any) { group0(m)["gates"] = []any{"full-moon"} }, []string{`unknown gate "full-moon"`}},
		{"write in gated group", func(m map[string]any) { group0(m)["gates"] = []any{"kafka-group-active"} }, []string{at(0), "gated"}},
		{"equal that writes", func(m map[string]any) { entry(m, 2)["action"] = "write" }, []string{at(2), "not possible"}},
		{"blocked partition turned to write", func(m map[string]any) { entry(m, 4)["action"] = "write" }, []string{at(4), "clamp"}},
		{"backwards write under max", func(m map[string]any) { entry(m, 3)["action"] = "write" }, []string{at(3), "backwards from 50 to 40"}},
		{"write equal to kafka", func(m map[string]any) { entry(m, 1)["kafka_offset"] = 60 }, []string{at(1), "equal to the kafka_offset"}},
		{"write over kafka under kafka policy", func(m map[string]any) { m["policy"].(map[string]any)["on_conflict"] = "kafka" },
			[]string{at(1), `on_conflict is "kafka"`}},
		{"zk-only write with a kafka offset", func(m map[string]any) { entry(m, 0)["kafka_offset"] = 1 }, []string{at(0), "zk-only with a kafka_offset"}},
		{"zk-ahead write without kafka offset", func(m map[string]any) { entry(m, 1)["kafka_offset"] = nil }, []string{at(1), "needs a kafka_offset"}},
		{"write outside the log", func(m map[string]any) { entry(m, 0)["log_end"] = 20 }, []string{at(0), "outside the log 10..20"}},
		{"clamped write not at the bound", func(m map[string]any) {
			m["policy"].(map[string]any)["out_of_range"] = "clamp"
			entry(m, 4)["action"], entry(m, 4)["target"] = "write", 11
		}, []string{at(4), "clamped target 11"}},
		{"write target not the zk offset", func(m map[string]any) { entry(m, 1)["target"] = 99 }, []string{at(1), "target 99"}},
		{"negative target", func(m map[string]any) { entry(m, 2)["target"] = -1 }, []string{at(2), "target -1"}},
		{"negative kafka offset", func(m map[string]any) { entry(m, 2)["kafka_offset"] = -1 }, []string{at(2), "kafka_offset -1"}},
		{"invalid znode with an offset", func(m map[string]any) {
			entry(m, 4)["class"] = "invalid-znode"
		}, []string{at(4), "no zk_offset"}},
		{"half a log range", func(m map[string]any) { delete(entry(m, 2), "log_end") }, []string{at(2), "log_start and log_end"}},
		{"wrong type", func(m map[string]any) { entry(m, 2)["partition"] = "2" }, []string{"partition"}},
		{"negative members", func(m map[string]any) { group0(m)["kafka_members"] = -1 }, []string{"kafka_members -1"}},
		{"bad duration", func(m map[string]any) { m["offsets_retention"] = "a week" }, []string{"a week"}},
	}
	base := encode(t, basePlan(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(base, &m); err != nil {
				t.Fatal(err)
			}
			tt.edit(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			assertRejected(t, b, tt.want...)
		})
	}
}

func TestDecodePlanRejectsMalformedText(t *testing.T) {
	base := string(encode(t, basePlan(t)))
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", []string{"empty input"}},
		{"blank", " \n", []string{"empty input"}},
		{"not an object", "[]", []string{"plan"}},
		{"null", "null", []string{"schema_version 0"}},
		{"truncated", base[:len(base)/2], []string{"unexpected end of input"}},
		{"second plan", base + base, []string{"trailing data"}},
		{"trailing garbage", base + "x", []string{"after the plan"}},
		{"repeated key", strings.Replace(base, `"action": "skip"`, `"action": "skip", "action": "write"`, 1), []string{`"action" appears twice`}},
		{"escaped repeated key", strings.Replace(base, `"action": "skip"`, `"action": "skip", "\u0061ction": "write"`, 1), []string{`"action" appears twice`}},
		{"escaped key in another case", strings.Replace(base, `"action": "skip"`, `"\u0041ction": "skip"`, 1), []string{`unknown field "Action"`}},
		{"deep nesting", strings.Repeat("[", 100) + strings.Repeat("]", 100), []string{"nested deeper"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertRejected(t, []byte(tt.text), tt.want...) })
	}
	// Structure characters inside strings are text, and an escaped key is still its name.
	p := basePlan(t)
	p.Groups[0].Entries[2].Reason = `odd "}{[],:\ reason`
	odd := strings.Replace(string(encode(t, p)), `"class"`, `"\u0063lass"`, 1)
	if back, err := migratetest.DecodePlan(strings.NewReader(odd)); err != nil || back.Groups[0].Entries[2].Reason != p.Groups[0].Entries[2].Reason {
		t.Fatalf("plan with an odd reason and an escaped key: %v", err)
	}
	// Whitespace after the plan is not data.
	if _, err := migratetest.DecodePlan(strings.NewReader(base + "\n\t \n")); err != nil {
		t.Fatalf("trailing whitespace rejected: %v", err)
	}
}

func assertRejected(t *testing.T, b []byte, want ...string) {
	t.Helper()
	p, err := migratetest.DecodePlan(bytes.NewReader(b))
	if err == nil {
		t.Fatalf("DecodePlan accepted it: %+v", p)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
