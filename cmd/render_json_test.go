package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestPlanJSONStreamsTheEncoderBytes: the group-at-a-time writer must produce exactly what one
// json.Encoder call over the whole document did before, for plans with no groups, nil groups,
// one and several groups, gates, nil and set offsets, and strings that need escaping
// (including a filter that spells the groups key itself).
func TestPlanJSONStreamsTheEncoderBytes(t *testing.T) {
	off := func(v int64) *int64 { return &v }
	entry := func(topic string, p int32, c migrate.Class, a migrate.Action) migrate.Entry {
		return migrate.Entry{Topic: topic, Partition: p, Class: c, Action: a, Reason: "r <&> \"q\"", ZK: off(int64(p) + 5),
			LogStart: off(0), LogEnd: off(100), Target: int64(p) + 5, Znode: "/consumers/g/offsets/" + topic + "/0",
			Mtime: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}
	}
	base := migrate.Plan{SchemaVersion: migrate.PlanSchemaVersion, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
		Policy: migrate.DefaultPolicy(), Retention: migrate.Duration(7 * 24 * time.Hour), Fingerprint: "sha256:abc"}
	withGroups := func(gs ...migrate.GroupPlan) migrate.Plan { p := base; p.Groups = gs; return p }
	tricky := withGroups(migrate.GroupPlan{Group: "g", Entries: []migrate.Entry{}})
	tricky.Filter = migrate.FilterSpec{GroupRegex: "\n  \"groups\": []", TopicRegex: "</script>"}
	cases := []struct {
		name string
		plan migrate.Plan
	}{
		{"nil groups", base},
		{"no groups", withGroups()},
		{"one group", withGroups(migrate.GroupPlan{Group: "a", KafkaState: "Empty",
			Entries: []migrate.Entry{entry("t", 0, migrate.ClassZKOnly, migrate.ActionWrite)}})},
		{"several groups, gates, a kafka offset, an invalid znode", withGroups(
			migrate.GroupPlan{Group: "a", Entries: []migrate.Entry{entry("t", 0, migrate.ClassZKOnly, migrate.ActionWrite),
				{Topic: "t", Partition: -1, Class: migrate.ClassInvalidZnode, Action: migrate.ActionBlock, Znode: "/x", Reason: "bad"}}},
			migrate.GroupPlan{Group: "b\u2028", KafkaState: "Stable", KafkaMembers: 2, LiveConsumers: []string{"ids/c1"},
				Gates: []migrate.Gate{migrate.GateLegacyConsumersAlive, migrate.GateKafkaGroupActive},
				Entries: []migrate.Entry{func() migrate.Entry {
					e := entry("u", 3, migrate.ClassKafkaAhead, migrate.ActionSkip)
					e.Kafka = off(9)
					return e
				}()}},
			migrate.GroupPlan{Group: "c", Entries: []migrate.Entry{}})},
		{"filter text that looks like the groups key", tricky},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(planJSON{Plan: tc.plan, Summary: tc.plan.Summary(), Safe: tc.plan.Safe()}); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writePlanJSON(&got, tc.plan); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("streamed JSON differs from the encoder's\n--- got\n%s\n--- want\n%s", got.String(), want.String())
			}
		})
	}
}

// failWriter fails every write, as a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestPlanJSONReportsWriteErrors(t *testing.T) {
	var groups []migrate.GroupPlan
	for range 2000 { // more than the 64 KiB buffer
		groups = append(groups, migrate.GroupPlan{Group: "group-with-a-long-enough-name", Entries: []migrate.Entry{}})
	}
	if err := writePlanJSON(failWriter{}, migrate.Plan{Groups: groups}); err == nil {
		t.Fatal("a failed write was not reported")
	}
}

// writePlanJSON renders a whole plan through planRenderer, as the streamed plan command does
// one group at a time. A plan with nil groups, which Build never returns, is encoded at once.
func writePlanJSON(w io.Writer, p migrate.Plan) error {
	if p.Groups == nil {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(planJSON{Plan: p, Summary: p.Summary(), Safe: p.Safe()})
	}
	return renderPlan(w, "json", p)
}

// renderPlan writes a whole plan as the streamed plan command does.
func renderPlan(w io.Writer, format string, p migrate.Plan) error {
	r := newPlanRenderer(w, format, defaultSummaryRows)
	if err := r.Head(p); err != nil {
		return err
	}
	if len(p.Groups) > 0 {
		if err := r.Groups(p.Groups); err != nil {
			return err
		}
	}
	return r.End(migrate.PlanTail{Fingerprint: p.Fingerprint, Summary: p.Summary()})
}
