package e2e_test

import (
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestPlanOfAnotherCluster: a plan file records the real cluster (Kafka's cluster id, the
// ZooKeeper server and chroot); edited to name another Kafka cluster, copy refuses it naming
// both ids and writes nothing; --force runs it.
func TestPlanOfAnotherCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the real stack")
	}
	e := newEnv(t)
	topic := e.topic(10)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 4})
	planFile := e.savePlan()
	saved, err := migratetest.ReadPlanFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	c := saved.Cluster
	if c == nil || c.KafkaClusterID == "" || len(c.ZooKeeper) != 1 || c.ZooKeeper[0] != e.st.ZK || c.Chroot != e.chroot {
		t.Fatalf("plan file cluster %+v, want Kafka's id, zookeeper %s, chroot %s", c, e.st.ZK, e.chroot)
	}
	real := c.KafkaClusterID
	data, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"kafka_cluster_id": `+quoteJSON(t, real), `"kafka_cluster_id": "another-cluster"`, 1)
	if edited == string(data) {
		t.Fatalf("no kafka_cluster_id %q in the plan file:\n%s", real, data)
	}
	if err := os.WriteFile(planFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.cli("migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("b1.jsonl"))
	if r.code != 1 || !strings.Contains(r.stderr, "plan made on kafka cluster id another-cluster") ||
		!strings.Contains(r.stderr, "connected to kafka cluster id "+real) {
		t.Fatalf("copy of a plan of another cluster: want exit 1 naming both ids, got %s", r)
	}
	if got := e.offsets(g); len(got) != 0 {
		t.Fatalf("Kafka holds %v after a refused copy, want nothing", got)
	}
	e.mustCLI(0, "migrate", "copy", "--plan", planFile, "--execute", "--force", "--backup", e.file("b2.jsonl"))
	if got, w := e.offsets(g), want(topic, map[int32]int64{0: 4}); !maps.Equal(got, w) {
		t.Errorf("Kafka holds %v after --force, want %v", got, w)
	}
}

func quoteJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
