package migrate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestBuildPlanGolden pins every entry of plans over every class scenario, policy and adjust,
// in a gated and an ungated group, with duplicate and invalid znodes, byte for byte (reasons
// included): plan files and scripts read these strings. testdata/plans.golden was written by
// the builder as it stood when the test was added; ZK2KAFKA_UPDATE_GOLDEN=1 rewrites it.
func TestBuildPlanGolden(t *testing.T) {
	var out bytes.Buffer
	for _, gated := range []bool{false, true} {
		for _, adj := range []int64{0, 1, -1, 7, -7, 1 << 40} {
			for _, pol := range policies() {
				pol.OffsetAdjust = adj
				in := goldenInputs(gated, adj)
				plan, err := migratetest.Build(in, pol, migratetest.Now)
				if err != nil {
					t.Fatalf("Build gated=%v policy %+v: %v", gated, pol, err)
				}
				fmt.Fprintf(&out, "== gated=%v policy=%+v fingerprint=%s\n", gated, pol, plan.Fingerprint)
				for _, e := range plan.Groups[0].Entries {
					line, err := json.Marshal(e)
					if err != nil {
						t.Fatal(err)
					}
					out.Write(append(line, '\n'))
				}
			}
		}
	}
	path := filepath.Join("testdata", "plans.golden")
	if os.Getenv("ZK2KAFKA_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		got, wantLines := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(got), len(wantLines)) {
			if !bytes.Equal(got[i], wantLines[i]) {
				t.Fatalf("line %d differs from %s:\n got %s\nwant %s", i+1, path, got[i], wantLines[i])
			}
		}
		t.Fatalf("%d lines, %s has %d", len(got), path, len(wantLines))
	}
}

// goldenInputs is one group with a partition per class scenario (topic "t", log 10..100, the
// scenario's offset before adj), a duplicate znode pair, and invalid znodes.
func goldenInputs(gated bool, adj int64) migrate.Inputs {
	const g = "g"
	committed := map[migrate.TopicPartition]int64{}
	var ranges []migrate.PartitionRange
	var offsets []migrate.LegacyOffset
	for i, sc := range classScenarios() {
		p := int32(i)
		ranges = append(ranges, logRange)
		o := off(g, "t", p, sc.zk-adj)
		if o.Offset < 0 {
			o.Offset = sc.zk // a raw offset this adjust cannot come from: keep the unadjusted one
		}
		offsets = append(offsets, o)
		if sc.kafka != nil {
			committed[migrate.TopicPartition{Topic: "t", Partition: p}] = *sc.kafka
		}
	}
	n := int32(len(ranges))
	ranges = append(ranges, logRange)
	dup := off(g, "t", n, 50)
	dup.Path += "-copy"
	offsets = append(offsets, off(g, "t", n, 50), dup,
		migrate.LegacyOffset{Topic: "t", Partition: -1, Path: "/consumers/g/offsets/t/0-3", Invalid: "partition name \"0-3\" looks like a 0.7-era name"},
		off(g, "missing", 0, 5), off(g, "t", n+5, 5))
	st := migrate.GroupState{State: "Empty", Committed: committed}
	var live []string
	if gated {
		st.State, st.Members = "Stable", 2
		live = []string{"ids/c2", "ids/c1", "owners/t/0=c1-0", "ids/c3", "ids/c4"}
	}
	return migrate.Inputs{
		Legacy: []migrate.LegacyGroup{{Group: g, Offsets: offsets, LiveConsumers: live}},
		Topics: map[string]migrate.TopicInfo{"t": topic(ranges...), "missing": {}},
		Groups: map[string]migrate.GroupState{g: st},
	}
}
