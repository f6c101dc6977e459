package copier_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// memBackup records what copy backed up, and can refuse like a full disk.
type memBackup struct {
	records map[string][]copier.PartitionResult
	fail    error
}

func (b *memBackup) Record(_ context.Context, groups []copier.GroupResult) error {
	if b.fail != nil {
		return b.fail
	}
	if b.records == nil {
		b.records = map[string][]copier.PartitionResult{}
	}
	for _, g := range groups {
		b.records[g.Group] = append(b.records[g.Group], g.Partitions...)
	}
	return nil
}

// copyFixture: group g1 with t/0=10 (Kafka none), t/1=20 (Kafka 15); group g2 with t/0=30.
func copyFixture(t *testing.T) (*migratetest.LegacyStore, *migratetest.KafkaStore) {
	t.Helper()
	legacy := migratetest.NewLegacyStore()
	legacy.SetOffset("g1", "t", 0, 10)
	legacy.SetOffset("g1", "t", 1, 20)
	legacy.SetOffset("g2", "t", 0, 30)
	kafka := migratetest.NewKafkaStore()
	kafka.AddTopic("t", migrate.PartitionRange{LogStart: 0, LogEnd: 100}, migrate.PartitionRange{LogStart: 0, LogEnd: 100})
	kafka.SetCommitted("g1", "t", 1, 15)
	return legacy, kafka
}

func planFor(t *testing.T, legacy migrate.LegacyStore, kafka migrate.KafkaState) migrate.Plan {
	t.Helper()
	in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migrate.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func statuses(r copier.Result) map[string]copier.PartitionStatus {
	out := map[string]copier.PartitionStatus{}
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			out[migrate.Key{Group: g.Group, Topic: p.Topic, Partition: p.Partition}.String()] = p.Status
		}
	}
	return out
}

func committed(t *testing.T, kafka *migratetest.KafkaStore, group string) map[migrate.TopicPartition]int64 {
	t.Helper()
	st, err := kafka.Groups(context.Background(), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	return st[group].Committed
}

func TestCopy(t *testing.T) {
	all := func(s copier.PartitionStatus) map[string]copier.PartitionStatus {
		return map[string]copier.PartitionStatus{"g1/t/0": s, "g1/t/1": s, "g2/t/0": s}
	}
	cases := []struct {
		name string
		// between runs after the plan and before copy: the world changes
		change     func(l *migratetest.LegacyStore, k *migratetest.KafkaStore)
		execute    bool
		backupErr  error
		want       map[string]copier.PartitionStatus
		wantG1     map[migrate.TopicPartition]int64 // Kafka's commits of g1 afterwards
		wantErr    bool
		wantBackup int // partitions backed up
		// zkMoved: the case changes a ZooKeeper offset, which a gates-only re-check does not
		// read again (TestCopyGatesOnlyTakesZooKeeperFromThePlan covers that mode).
		zkMoved bool
	}{
		{name: "dry run writes nothing", want: all(copier.StatusWouldWrite),
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 15}},
		{name: "execute writes and reads back", execute: true, want: all(copier.StatusWritten), wantBackup: 3,
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20}},
		{name: "legacy consumer came back: group blocked", execute: true, wantBackup: 1,
			change: func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) {
				g := migrate.LegacyGroup{Group: "g1", LiveConsumers: []string{"ids/c1"}, Offsets: []migrate.LegacyOffset{
					{Topic: "t", Partition: 0, Offset: 10, Path: "/consumers/g1/offsets/t/0"},
					{Topic: "t", Partition: 1, Offset: 20, Path: "/consumers/g1/offsets/t/1"}}}
				l.SetGroup(g)
			},
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusBlocked, "g1/t/1": copier.StatusBlocked, "g2/t/0": copier.StatusWritten},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 15}},
		{name: "kafka group became active: blocked, not clobbered", execute: true, wantBackup: 1,
			change: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("g1", "Stable", 2) },
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusBlocked, "g1/t/1": copier.StatusBlocked, "g2/t/0": copier.StatusWritten},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 15}},
		{name: "kafka moved past the target: never backwards", execute: true, wantBackup: 2,
			change: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetCommitted("g1", "t", 1, 50) },
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusBlocked, "g2/t/0": copier.StatusWritten},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 50}},
		{name: "zookeeper moved since the plan: blocked", execute: true, wantBackup: 2, zkMoved: true,
			change: func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.SetOffset("g1", "t", 0, 11) },
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusBlocked, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusWritten},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 20}},
		{name: "one partition refused by the broker", execute: true, wantBackup: 3,
			change: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) {
				k.FailPartition(migrate.Key{Group: "g1", Topic: "t", Partition: 0}, errors.New("OFFSET_METADATA_TOO_LARGE"))
			},
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusFailed, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusWritten},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 20}},
		{name: "backup fails: nothing written, the run stops", execute: true, backupErr: errors.New("no space left on device"), wantErr: true,
			want:   map[string]copier.PartitionStatus{"g1/t/0": copier.StatusFailed, "g1/t/1": copier.StatusFailed},
			wantG1: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 1}: 15}},
	}
	// Every case runs twice: with the re-check by known znode paths (a LegacyRechecker, as
	// zkreader is) and with the whole-group re-read of a store without it.
	for _, tc := range cases {
		for _, mode := range recheckModes {
			byPath := mode != "whole groups"
			if mode == "gates only" && tc.zkMoved {
				continue
			}
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				legacy, kafka := copyFixture(t)
				plan := planFor(t, legacy, kafka)
				if tc.change != nil {
					tc.change(legacy, kafka)
				}
				backup := &memBackup{fail: tc.backupErr}
				c := recheckCopier(mode, legacy, kafka, kafka, backup)
				reads := legacy.ReadCalls()
				res, err := migratetest.RunCopier(context.Background(), c, plan, tc.execute)
				if byPath && (legacy.RecheckCalls() == 0 || legacy.ReadCalls() != reads) {
					t.Errorf("re-check by path: %d rechecks, %d whole-group reads; want rechecks only", legacy.RecheckCalls(), legacy.ReadCalls()-reads)
				}
				if (err != nil) != tc.wantErr {
					t.Fatalf("err = %v, want error %v", err, tc.wantErr)
				}
				if got := statuses(res); !mapsEqual(got, tc.want) {
					t.Errorf("statuses = %v, want %v", got, tc.want)
				}
				if got := committed(t, kafka, "g1"); !mapsEqual(got, tc.wantG1) {
					t.Errorf("g1 in kafka = %v, want %v", got, tc.wantG1)
				}
				n := 0
				for _, items := range backup.records {
					n += len(items)
				}
				if n != tc.wantBackup {
					t.Errorf("backed up %d partitions, want %d", n, tc.wantBackup)
				}
			})
		}
	}
}

// TestCopyGatesOnlyTakesZooKeeperFromThePlan documents the trade of Copier.GatesOnly: a
// ZooKeeper offset moved during the copy by something that is not a registered consumer is not
// read again, so the planned value is written (never backwards in Kafka: g1/t/1 still goes
// from 15 to 20 only); a consumer that registers still blocks its group.
func TestCopyGatesOnlyTakesZooKeeperFromThePlan(t *testing.T) {
	legacy, kafka := copyFixture(t)
	plan := planFor(t, legacy, kafka)
	legacy.SetOffset("g1", "t", 0, 11)
	legacy.SetGroup(migrate.LegacyGroup{Group: "g2", LiveConsumers: []string{"ids/c1"},
		Offsets: []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 30, Path: "/consumers/g2/offsets/t/0"}}})
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: &memBackup{}, BatchGroups: 1, GatesOnly: true}
	res, err := migratetest.RunCopier(context.Background(), c, plan, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusBlocked}
	if got := statuses(res); !mapsEqual(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if got, want := committed(t, kafka, "g1"), map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20}; !mapsEqual(got, want) {
		t.Errorf("g1 in kafka = %v, want %v", got, want)
	}
	if got := committed(t, kafka, "g2"); len(got) != 0 {
		t.Errorf("g2 in kafka = %v, want nothing (a live consumer registered)", got)
	}
	if _, err := migratetest.RunCopier(context.Background(), &copier.Copier{Legacy: legacyOnly{legacy}, Kafka: kafka, Committer: kafka, Backup: &memBackup{}, GatesOnly: true}, plan, true); err == nil {
		t.Error("gates only over a store without a re-check by path: no error")
	}
}

// legacyOnly hides the fake's LegacyRechecker: copy must then re-read whole groups.
type legacyOnly struct{ migrate.LegacyStore }

// recheckModes are the three ways copy re-checks a batch before writing it: by the planned
// znode paths (a LegacyRechecker, as zkreader is), by re-reading whole groups (a store without
// it), and liveness and Kafka only (--recheck=gates).
var recheckModes = []string{"by path", "whole groups", "gates only"}

// recheckCopier is a Copier of one group per batch that re-checks as mode says.
func recheckCopier(mode string, legacy migrate.LegacyStore, kafka migrate.KafkaState, committer migrate.OffsetCommitter, backup copier.Backup) *copier.Copier {
	if mode == "whole groups" {
		legacy = legacyOnly{legacy}
	}
	return &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: committer, Backup: backup,
		BatchGroups: 1, GatesOnly: mode == "gates only"}
}

func TestCopyBackupHoldsPriorKafkaOffset(t *testing.T) {
	legacy, kafka := copyFixture(t)
	backup := &memBackup{}
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: backup}
	if _, err := migratetest.RunCopier(context.Background(), c, planFor(t, legacy, kafka), true); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(backup.records["g1"], func(p copier.PartitionResult) bool { return p.Partition == 1 })
	if i < 0 || backup.records["g1"][i].Before == nil || *backup.records["g1"][i].Before != 15 || backup.records["g1"][i].Target != 20 {
		t.Fatalf("backup of g1/t/1 = %+v, want before 15, target 20", backup.records["g1"])
	}
}

func TestCopyRerunIsIdempotentAndResumes(t *testing.T) {
	legacy, kafka := copyFixture(t)
	plan := planFor(t, legacy, kafka)
	// A first copy that got only g2 through (as if interrupted).
	kafka.SetCommitted("g2", "t", 0, 30)
	if drift := migratetest.Drift(plan, planFor(t, legacy, kafka)); len(drift) != 0 {
		t.Fatalf("our own earlier write counted as drift: %v", drift)
	}
	c := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: &memBackup{}}
	res, err := migratetest.RunCopier(context.Background(), c, plan, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]copier.PartitionStatus{"g1/t/0": copier.StatusWritten, "g1/t/1": copier.StatusWritten, "g2/t/0": copier.StatusAlready}
	if got := statuses(res); !mapsEqual(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
	before := len(kafka.Commits())
	res, err = migratetest.RunCopier(context.Background(), c, plan, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kafka.Commits()) - before; n != 0 {
		t.Errorf("re-run committed %d partitions, want 0", n)
	}
	if got := res.Counts()[copier.StatusAlready]; got != 3 {
		t.Errorf("re-run: %d already, want 3", got)
	}
}

func TestDriftSeesChanges(t *testing.T) {
	legacy, kafka := copyFixture(t)
	plan := planFor(t, legacy, kafka)
	legacy.SetOffset("g1", "t", 0, 12)
	kafka.SetCommitted("g2", "t", 0, 5)
	legacy.SetOffset("g3", "t", 0, 1)
	drift := migratetest.Drift(plan, planFor(t, legacy, kafka))
	if len(drift) != 3 {
		t.Fatalf("drift = %q, want 3 lines (zk moved, kafka moved, new group)", drift)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
