package copier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// snapshotLegacy is the fake legacy store as a point-in-time copy (a data directory): its
// liveness says nothing of who runs now. Its re-check is promoted.
type snapshotLegacy struct{ *migratetest.LegacyStore }

func (snapshotLegacy) Snapshot() string { return "a snapshot has no live sessions" }

// zkA is the ZooKeeper the saved plans of these tests were made on.
var zkA = migrate.ClusterIdentity{ZooKeeper: []string{"zk1:2181", "zk2:2181"}, Chroot: "/kafka"}

// planFileSink saves a streamed plan as plan --out does.
type planFileSink struct {
	path string
	w    *planfile.Writer
}

func (s *planFileSink) Head(p migrate.Plan) (err error) {
	s.w, err = planfile.Create(s.path, p)
	return err
}

func (s *planFileSink) Groups(gs []migrate.GroupPlan) error { return s.w.Groups(gs) }

// savePlanOn plans the stores as made on Kafka cluster kafkaID and ZooKeeper zkA, and saves
// the plan at path, then edits its JSON document (nil: as saved).
func savePlanOn(t *testing.T, legacy migrate.LegacyStore, kafka *migratetest.KafkaStore, kafkaID, path string, edit func(map[string]any)) {
	t.Helper()
	ctx := context.Background()
	kafka.SetClusterID(kafkaID)
	cluster, err := copier.CurrentCluster(ctx, kafka, zkA)
	if err != nil {
		t.Fatal(err)
	}
	sink := &planFileSink{path: path}
	pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Policy: migrate.DefaultPolicy(), Cluster: cluster}
	tail, err := pl.Stream(ctx, migratetest.Now, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.w.Commit(tail.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return
	}
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

// noCluster removes the plan's cluster: a plan of schema 2 that was edited.
func noCluster(doc map[string]any) { delete(doc, "cluster") }

// schema1 makes the plan one an earlier zk2kafka wrote: schema 1, no cluster, the retention
// as a Go duration string.
func schema1(doc map[string]any) {
	delete(doc, "cluster")
	doc["schema_version"] = 1
	secs, _ := doc["offsets_retention"].(float64)
	doc["offsets_retention"] = (time.Duration(secs) * time.Second).String()
}

// TestCopyRefusals calls Copy directly with each input the CLI refuses: the refusal is
// the core's, so a library caller cannot skip it. A refused copy writes nothing, creates no
// backup and returns no run; an allowed one writes nothing until its Results are ranged over,
// then writes every planned offset.
func TestCopyRefusals(t *testing.T) {
	cases := []struct {
		name     string
		saved    bool                     // copy a saved plan (without: plan afresh)
		savedOn  string                   // the Kafka cluster id the saved plan was made on
		edit     func(map[string]any)     // the saved plan's document
		copyOn   string                   // the Kafka cluster id copy sees
		zk       *migrate.ClusterIdentity // the ZooKeeper copy sees (nil: zkA)
		snapshot bool                     // the legacy store is a SnapshotStore
		stopped  bool                     // LegacyStopped
		force    bool
		dryRun   bool
		wantErr  error  // the refusal, or nil
		wantMsg  string // in the refusal's message, or in the log when allowed
	}{
		{name: "fresh plan", copyOn: "A"},
		{name: "saved plan, same cluster", saved: true, savedOn: "A", copyOn: "A"},
		{name: "saved plan, same kafka, zookeeper under another name", saved: true, savedOn: "A", copyOn: "A",
			zk: &migrate.ClusterIdentity{ZooKeeper: []string{"zk9:2181"}, Chroot: "/kafka"}},
		{name: "plan from another kafka cluster", saved: true, savedOn: "A", copyOn: "B", wantErr: migrate.ErrOtherCluster,
			wantMsg: "kafka cluster id differ"},
		{name: "plan from another kafka cluster, dry run", saved: true, savedOn: "A", copyOn: "B", dryRun: true, wantErr: migrate.ErrOtherCluster},
		{name: "plan from another chroot", saved: true, savedOn: "A", copyOn: "A", zk: &migrate.ClusterIdentity{ZooKeeper: zkA.ZooKeeper, Chroot: "/other"},
			wantErr: migrate.ErrOtherCluster, wantMsg: "zookeeper chroot differ"},
		{name: "plan from another zookeeper, kafka gives no id", saved: true, savedOn: "", copyOn: "",
			zk: &migrate.ClusterIdentity{ZooKeeper: []string{"zk9:2181"}, Chroot: "/kafka"}, wantErr: migrate.ErrOtherCluster},
		{name: "plan from another cluster, forced", saved: true, savedOn: "A", copyOn: "B", force: true,
			wantMsg: "running a plan made on another cluster (--force)"},
		{name: "schema 2 plan without cluster", saved: true, savedOn: "A", edit: noCluster, copyOn: "A", wantErr: migrate.ErrOtherCluster,
			wantMsg: "always records the cluster it was made on"},
		{name: "schema 2 plan without cluster, forced", saved: true, savedOn: "A", edit: noCluster, copyOn: "A", force: true,
			wantMsg: "running a plan file that records no cluster (--force)"},
		{name: "schema 1 plan without cluster", saved: true, savedOn: "A", edit: schema1, copyOn: "B",
			wantMsg: "the plan file records no cluster (written by an earlier zk2kafka)"},
		{name: "snapshot store", copyOn: "A", snapshot: true, wantErr: migrate.ErrLivenessUnseen,
			wantMsg: "a snapshot has no live sessions; stop them, then say so with --legacy-stopped (nothing was written)"},
		{name: "snapshot store, dry run", copyOn: "A", snapshot: true, dryRun: true, wantErr: migrate.ErrLivenessUnseen},
		{name: "snapshot store, saved plan", saved: true, savedOn: "A", copyOn: "A", snapshot: true, wantErr: migrate.ErrLivenessUnseen},
		{name: "snapshot store, legacy stopped", copyOn: "A", snapshot: true, stopped: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fake, kafka := copyFixture(t)
			var legacy migrate.LegacyStore = fake
			if tc.snapshot {
				legacy = snapshotLegacy{fake}
			}
			dir := t.TempDir()
			job := copier.Job{Legacy: legacy, LegacyIdentity: zkA, LegacyStopped: tc.stopped, Kafka: kafka, Force: tc.force,
				Policy: migrate.DefaultPolicy(), Execute: !tc.dryRun, Backup: filepath.Join(dir, "backup.jsonl")}
			if tc.zk != nil {
				job.LegacyIdentity = *tc.zk
			}
			if tc.saved {
				job.PlanFile = filepath.Join(dir, "plan.json")
				savePlanOn(t, fake, kafka, tc.savedOn, job.PlanFile, tc.edit)
			}
			kafka.SetClusterID(tc.copyOn)
			var logs bytes.Buffer
			job.Log = slog.New(slog.NewTextHandler(&logs, nil))

			run, err := copier.Copy(ctx, job)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || run != nil || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("Copy = %v, %v; want the refusal %v naming %q", run, err, tc.wantErr, tc.wantMsg)
				}
				if n := len(kafka.Commits()); n != 0 {
					t.Errorf("a refused copy committed %d times", n)
				}
				if _, err := os.Stat(job.Backup); !os.IsNotExist(err) {
					t.Errorf("a refused copy created its backup file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Copy: %v", err)
			}
			if !strings.Contains(logs.String(), tc.wantMsg) {
				t.Errorf("the log lacks %q:\n%s", tc.wantMsg, logs.String())
			}
			if n := len(kafka.Commits()); n != 0 {
				t.Fatalf("Copy committed %d times before its results were ranged over", n)
			}
			if run.Stats.WriteGroups != 2 {
				t.Errorf("stats: %d groups with writes, want 2", run.Stats.WriteGroups)
			}
			got := map[string]copier.PartitionStatus{}
			for gr, err := range run.Results(ctx) {
				if err != nil {
					t.Fatalf("Results: %v", err)
				}
				maps.Copy(got, statuses(copier.Result{Groups: []copier.GroupResult{gr}}))
			}
			want := copier.StatusWritten
			if tc.dryRun {
				want = copier.StatusWouldWrite
			}
			for _, k := range []string{"g1/t/0", "g1/t/1", "g2/t/0"} {
				if got[k] != want {
					t.Errorf("%s: %s, want %s (all: %v)", k, got[k], want, got)
				}
			}
			if wrote := committed(t, kafka, "g1"); !tc.dryRun && (wrote[migrate.TopicPartition{Topic: "t", Partition: 0}] != 10 ||
				wrote[migrate.TopicPartition{Topic: "t", Partition: 1}] != 20) {
				t.Errorf("g1 committed %v, want t/0=10 t/1=20", wrote)
			}
		})
	}
}

// TestCopyResults: the writes happen as the caller ranges over Results, batch by batch; a
// break stops the copy after the batch in progress (nothing of the next batch is committed);
// the results are taken once; a run closed before its results writes nothing.
func TestCopyResults(t *testing.T) {
	ctx := context.Background()
	prepare := func(t *testing.T) (*copier.Run, *migratetest.KafkaStore) {
		t.Helper()
		legacy, kafka := copyFixture(t)
		run, err := copier.Copy(ctx, copier.Job{Legacy: legacy, Kafka: kafka, Policy: migrate.DefaultPolicy(), BatchGroups: 1,
			Execute: true, Backup: filepath.Join(t.TempDir(), "backup.jsonl")})
		if err != nil {
			t.Fatal(err)
		}
		return run, kafka
	}
	t.Run("break after the first batch", func(t *testing.T) {
		run, kafka := prepare(t)
		for gr, err := range run.Results(ctx) {
			if err != nil || gr.Group != "g1" {
				t.Fatalf("first result %+v, %v; want g1", gr, err)
			}
			break
		}
		if got := committed(t, kafka, "g2"); len(got) != 0 {
			t.Errorf("g2, of the batch after the break, committed %v", got)
		}
		if got := committed(t, kafka, "g1"); got[migrate.TopicPartition{Topic: "t", Partition: 0}] != 10 {
			t.Errorf("g1 committed %v, want t/0=10", got)
		}
		for _, err := range run.Results(ctx) {
			if err == nil || !strings.Contains(err.Error(), "already taken") {
				t.Errorf("a second range gave %v, want the results already taken", err)
			}
		}
	})
	t.Run("closed before its results", func(t *testing.T) {
		run, kafka := prepare(t)
		run.Close()
		n := 0
		for _, err := range run.Results(ctx) {
			if n++; err == nil {
				t.Errorf("a closed run yielded a result")
			}
		}
		if n != 1 || len(kafka.Commits()) != 0 {
			t.Errorf("%d yields and %d commits from a closed run, want one error and none", n, len(kafka.Commits()))
		}
	})
	t.Run("a stopped copy ends with its error", func(t *testing.T) {
		run, kafka := prepare(t)
		down := errors.New("coordinator gone")
		kafka.FailReads(down)
		var last error
		for _, err := range run.Results(ctx) {
			last = err
		}
		if !errors.Is(last, down) || len(kafka.Commits()) != 0 {
			t.Errorf("the range ended with %v after %d commits; want the re-check's read error, nothing committed", last, len(kafka.Commits()))
		}
	})
}
