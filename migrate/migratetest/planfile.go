package migratetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// The whole-plan forms of what the commands do a group at a time: tests build, save, read and
// compare plans that fit in memory. The commands stream (planfile.Scan,
// planfile.Create, copier.Copy); these helpers go through the same calls.

// EncodePlan writes p as indented JSON after checking it with Validate, as a saved plan file.
func EncodePlan(w io.Writer, p migrate.Plan) error {
	if err := p.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// DecodePlan reads exactly one plan from r as strictly as copy reads a plan file
// (planfile.Scan), then checks it whole with Validate.
func DecodePlan(r io.Reader) (migrate.Plan, error) {
	var groups []migrate.GroupPlan
	p, err := planfile.Scan(r, func(g migrate.GroupPlan) error { groups = append(groups, g); return nil })
	if err != nil {
		return migrate.Plan{}, err
	}
	if p.Groups != nil {
		p.Groups = append(p.Groups, groups...)
	}
	if err := p.Validate(); err != nil {
		return migrate.Plan{}, err
	}
	return p, nil
}

// ReadPlanFile reads and checks the plan saved at path.
func ReadPlanFile(path string) (migrate.Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return migrate.Plan{}, fmt.Errorf("open plan file: %w", err)
	}
	p, err := DecodePlan(bytes.NewReader(data))
	if err != nil {
		return migrate.Plan{}, fmt.Errorf("plan file %s: %w", path, err)
	}
	return p, nil
}

// WritePlanFile saves p at path through planfile.Create, as plan --out does; p is
// validated whole first.
func WritePlanFile(path string, p migrate.Plan) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("plan file %s: %w", path, err)
	}
	w, err := planfile.Create(path, p)
	if err != nil {
		return err
	}
	if err := w.Groups(p.Groups); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Commit(p.Fingerprint)
}

// Drift lists how the stores changed between a saved plan and a fresh plan of the same
// selection, one line per group or partition, as copy's saved-plan check words it.
func Drift(saved, fresh migrate.Plan) []string {
	var out []string
	now := map[string]migrate.GroupPlan{}
	for _, g := range fresh.Groups {
		now[g.Group] = g
	}
	for _, sg := range saved.Groups {
		fg, ok := now[sg.Group]
		if !ok {
			out = append(out, copier.DriftGone(sg.Group))
			continue
		}
		delete(now, sg.Group)
		out = append(out, copier.GroupDrift(sg, fg)...)
	}
	for _, g := range fresh.Groups {
		if _, added := now[g.Group]; added {
			out = append(out, copier.DriftNew(g.Group))
		}
	}
	return out
}

// RunCopier runs c over a plan held whole in memory and gathers every group's result.
func RunCopier(ctx context.Context, c *copier.Copier, plan migrate.Plan, execute bool) (copier.Result, error) {
	res := copier.Result{DryRun: !execute}
	whole := func(yield func([]migrate.GroupPlan, error) bool) { yield(plan.Groups, nil) }
	err := c.Stream(ctx, plan, whole, len(plan.Writes()), execute, func(g copier.GroupResult) error {
		res.Groups = append(res.Groups, g)
		return nil
	})
	return res, err
}
