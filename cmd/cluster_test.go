package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestPlanFileCluster: plan --out records the cluster (Kafka's cluster id, the ZooKeeper
// servers and chroot); copy --plan runs it on that cluster, refuses it on another (exit 1,
// naming both, nothing written) unless --force, and runs a plan file that records no cluster
// (written by an earlier zk2kafka) with a warning.
func TestPlanFileCluster(t *testing.T) {
	zkA := []string{"--zk", "zk2:2181,zk1:2181/kafka"}
	cases := []struct {
		name    string
		kafkaID string   // the cluster id copy sees
		zk      []string // copy's --zk
		edit    func(doc map[string]any)
		args    []string
		code    int
		wantErr []string
		wantLog string
		commits bool
	}{
		{name: "same cluster", kafkaID: "cluster-A", zk: []string{"--zk", "zk1:2181/kafka"}, code: ExitOK, commits: true},
		{name: "other kafka cluster", kafkaID: "cluster-B", zk: zkA, code: ExitError,
			wantErr: []string{"the plan was made on another cluster (kafka cluster id differ)",
				"plan made on kafka cluster id cluster-A, zookeeper zk1:2181,zk2:2181/kafka",
				"connected to kafka cluster id cluster-B, zookeeper zk1:2181,zk2:2181/kafka", "--force"}},
		{name: "other chroot", kafkaID: "cluster-A", zk: []string{"--zk", "zk1:2181/other"}, code: ExitError,
			wantErr: []string{"(zookeeper chroot differ)", "zookeeper zk1:2181/other"}},
		{name: "other zookeeper names, the same kafka cluster", kafkaID: "cluster-A", zk: []string{"--zk", "zk9:2181/kafka"},
			code: ExitOK, commits: true},
		{name: "other zookeeper, kafka gives no id", kafkaID: "", zk: []string{"--zk", "zk9:2181/kafka"}, code: ExitError,
			wantErr: []string{"(zookeeper servers differ)"}},
		{name: "forced", kafkaID: "cluster-B", zk: zkA, args: []string{"--force"}, code: ExitOK, commits: true,
			wantLog: "running a plan made on another cluster (--force)"},
		{name: "schema 2 plan without cluster", kafkaID: "cluster-B", zk: zkA, edit: func(doc map[string]any) { delete(doc, "cluster") },
			code: ExitError, wantErr: []string{"always records the cluster it was made on, and this one records none"}},
		{name: "schema 2 plan without cluster, forced", kafkaID: "cluster-B", zk: zkA, edit: func(doc map[string]any) { delete(doc, "cluster") },
			args: []string{"--force"}, code: ExitOK, commits: true, wantLog: "running a plan file that records no cluster (--force)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := fixture()
			f.kafka.SetClusterID("cluster-A")
			planFile := filepath.Join(t.TempDir(), "plan.json")
			if _, errOut, code := run(t, f, append(zkA, "migrate", "plan", "--out", planFile)...); code != ExitOK {
				t.Fatalf("plan exit %d: %s", code, errOut)
			}
			saved, err := migratetest.ReadPlanFile(planFile)
			if err != nil {
				t.Fatal(err)
			}
			want := migrate.ClusterIdentity{KafkaClusterID: "cluster-A", ZooKeeper: []string{"zk1:2181", "zk2:2181"}, Chroot: "/kafka"}
			if saved.Cluster == nil || saved.Cluster.String() != want.String() {
				t.Fatalf("plan file cluster %+v, want %+v", saved.Cluster, want)
			}
			if tc.edit != nil {
				editJSON(t, planFile, tc.edit)
			}
			f.kafka.SetClusterID(tc.kafkaID)
			args := append(append(tc.zk, "migrate", "copy", "--plan", planFile, "--execute", "--backup",
				filepath.Join(t.TempDir(), "b.jsonl")), tc.args...)
			out, errOut, code := run(t, f, args...)
			if code != tc.code {
				t.Fatalf("copy exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range append(tc.wantErr, tc.wantLog) {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if got := len(f.kafka.Commits()) > 0; got != tc.commits {
				t.Errorf("%d commits, want some: %v", len(f.kafka.Commits()), tc.commits)
			}
		})
	}
}

// editJSON rewrites a JSON file through edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
