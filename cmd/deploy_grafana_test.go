package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestDeployGrafanaDashboard holds deploy/grafana's dashboard to the metrics this build serves:
// every panel has a query, every zk2kafka series it names is one dual-commit exports, and it
// uses only the variables the dashboard defines. Whether each query returns data is checked
// against a real Prometheus scraping a real dual-commit (e2e TestDualCommitKafkaOutage).
func TestDeployGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "zk2kafka-dual-commit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	// Every labelled series shows once a group has synced with a write, a failure and a latency.
	o, _ := testObserver(t, true)
	mtime := o.m.started.Add(time.Second)
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	o.SelectionChanged(mirror.Selection{Groups: []string{"g"}, Added: []string{"g"}})
	o.GroupSynced(mirror.GroupStatus{Group: "g", Phase: mirror.PhaseZKPrimary, Writes: []mirror.Write{
		{TopicPartition: tp, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, To: 1, Mtime: mtime, Acked: mtime},
		{TopicPartition: tp, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, To: 2, Err: errors.New("boom")},
		{TopicPartition: tp, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, To: 2, Refused: true},
	}})
	exported := map[string]bool{}
	for l := range strings.Lines(scrape(t, o)) {
		if name, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, kind, _ := strings.Cut(strings.TrimSpace(name), " ")
			exported[name] = true
			if kind == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exported[name+s] = true
				}
			}
		}
	}
	vars := []string{"__rate_interval"}
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	series := regexp.MustCompile(`zk2kafka_[a-z_]+`)
	variable := regexp.MustCompile(`\$\{?([A-Za-z_]+)`)
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without uid or panels: uid %q, %d panels", d.UID, len(d.Panels))
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, name := range series.FindAllString(q.Expr, -1) {
				if !exported[name] {
					t.Errorf("panel %q: %s is not a series dual-commit exports: %s", p.Title, name, q.Expr)
				}
			}
			for _, m := range variable.FindAllStringSubmatch(q.Expr, -1) {
				if !slices.Contains(vars, m[1]) {
					t.Errorf("panel %q: variable $%s is not defined: %s", p.Title, m[1], q.Expr)
				}
			}
		}
	}
}
