package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// dashboardFile is the Grafana dashboard of deploy/ (deploy/README.md).
const dashboardFile = "deploy/grafana/zk2kafka-dual-commit.json"

// dashboardQuery is one target of one panel.
type dashboardQuery struct {
	panel, ref, expr string
}

// dashboardQueries reads every panel's queries from the dashboard.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stacktest.RepoRoot(), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []dashboardQuery
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		for _, q := range p.Targets {
			out = append(out, dashboardQuery{panel: p.Title, ref: q.RefID, expr: q.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no queries", dashboardFile)
	}
	return out
}

// checkDashboard runs every panel's query on the real Prometheus that scraped the outage test's
// dual-commit, over the test's time range, with Grafana's variables as Grafana would set them
// ($job: the scrape job, $__rate_interval: four scrape intervals and more), and wants data from
// each: at least one series with at least one number.
func checkDashboard(t *testing.T, p *promServer, from, to time.Time) {
	t.Helper()
	r := strings.NewReplacer("$job", p.job, "$__rate_interval", "10s")
	for _, q := range dashboardQueries(t) {
		expr := r.Replace(q.expr)
		if strings.Contains(expr, "$") {
			t.Errorf("panel %q query %s: a Grafana variable the test does not know: %s", q.panel, q.ref, q.expr)
			continue
		}
		series, numbers, err := p.queryRange(expr, from, to)
		switch {
		case err != nil:
			t.Errorf("panel %q query %s: %v", q.panel, q.ref, err)
		case series == 0 || numbers == 0:
			t.Errorf("panel %q query %s returned no data (%d series, %d numbers): %s", q.panel, q.ref, series, numbers, expr)
		default:
			t.Logf("panel %q query %s: %d series, %d points", q.panel, q.ref, series, numbers)
		}
	}
}
