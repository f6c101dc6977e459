package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// planFileCorpus damages or edits group g's saved plan before `copy --plan --execute`.
func planFileCorpus(topic string) []badInput {
	// raw rewrites the saved plan's bytes.
	raw := func(edit func(b []byte) []byte) func(e *env, g, backup string) []string {
		return func(e *env, g, backup string) []string {
			f := e.savePlanOf(g)
			b, err := os.ReadFile(f)
			if err != nil {
				e.t.Fatal(err)
			}
			if err := os.WriteFile(f, edit(b), 0o644); err != nil {
				e.t.Fatal(err)
			}
			return []string{"migrate", "copy", "--plan", f, "--execute", "--backup", backup}
		}
	}
	// edited changes the saved plan as a person with an editor would: valid JSON, valid plan.
	edited := func(edit func(e *env, g string, p *migrate.Plan)) func(e *env, g, backup string) []string {
		return func(e *env, g, backup string) []string {
			g2 := e.group() // a second group, so that a plan without g still writes something
			e.zkOffsets(g2, topic, map[int32]int64{0: 1})
			f := filepath.Join(e.dir, "plan.json")
			e.mustCLI(0, "migrate", "plan", "--group", g+","+g2, "--out", f)
			p, err := migratetest.ReadPlanFile(f)
			if err != nil {
				e.t.Fatal(err)
			}
			edit(e, g, &p)
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				e.t.Fatal(err)
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				e.t.Fatal(err)
			}
			return []string{"migrate", "copy", "--plan", f, "--execute", "--backup", backup}
		}
	}
	entry := func(p *migrate.Plan, g string) *migrate.Entry {
		for i := range p.Groups {
			if p.Groups[i].Group == g {
				return &p.Groups[i].Entries[0]
			}
		}
		panic("group " + g + " is not in the plan")
	}
	return []badInput{
		{"plan: truncated", raw(func(b []byte) []byte { return b[:len(b)/2] }), 1, []string{"truncated", ".json"}},
		{"plan: empty", raw(func([]byte) []byte { return nil }), 1, []string{"empty input", ".json"}},
		{"plan: not JSON", raw(func([]byte) []byte { return []byte("group,topic,partition,offset\n") }), 1, []string{"decode plan", ".json"}},
		{"plan: trailing data", raw(func(b []byte) []byte { return append(b, "{}"...) }), 1, []string{"trailing data"}},
		{"plan: unknown field", raw(func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "{", `{"comment": "reviewed",`, 1))
		}), 1, []string{"comment"}},
		{"plan: repeated key", raw(func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "{", `{"schema_version": 1,`, 1))
		}), 1, []string{"schema_version"}},
		{"plan: key in another case", raw(func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"target"`, `"Target"`, 1))
		}), 1, []string{"Target"}},
		{"plan: newer schema", raw(func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"schema_version": 2`, `"schema_version": 3`, 1))
		}), 1, []string{"schema_version 3"}},
		{"plan: target edited", edited(func(_ *env, g string, p *migrate.Plan) { entry(p, g).Target = 7 }), 1,
			[]string{"target 7 differs from zk_offset 3"}},
		{"plan: negative target", edited(func(_ *env, g string, p *migrate.Plan) { entry(p, g).Target = -3 }), 1,
			[]string{"-3"}},
		{"plan: group removed", edited(func(_ *env, g string, p *migrate.Plan) {
			p.Groups = removeGroup(p.Groups, g)
		}), 1, []string{"edited after it was saved", "new since the plan"}},
		{"plan: partition set to block", edited(func(_ *env, g string, p *migrate.Plan) {
			en := entry(p, g)
			en.Action, en.Reason = migrate.ActionBlock, "not this one"
		}), 1, []string{"edited after it was saved", "planned zk-only/block"}},
		{"plan: group renamed", edited(func(e *env, g string, p *migrate.Plan) {
			for i := range p.Groups {
				if p.Groups[i].Group == g {
					p.Groups[i].Group = g + "-renamed"
				}
			}
		}), 1, []string{"edited after it was saved", "-renamed"}},
		{"plan: missing file", func(e *env, _, backup string) []string {
			return []string{"migrate", "copy", "--plan", filepath.Join(e.dir, "nope.json"), "--execute", "--backup", backup}
		}, 1, []string{"nope.json"}},
		{"plan: a folder", func(e *env, _, backup string) []string {
			return []string{"migrate", "copy", "--plan", e.dir, "--execute", "--backup", backup}
		}, 1, []string{"plan file {dir}"}},
	}
}

func removeGroup(groups []migrate.GroupPlan, g string) []migrate.GroupPlan {
	var out []migrate.GroupPlan
	for _, gp := range groups {
		if gp.Group != g {
			out = append(out, gp)
		}
	}
	return out
}
