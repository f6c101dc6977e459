package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/migrate/planfile"
)

// manyGroups returns stores with n groups of every kind a plan tells apart: written, equal,
// kafka-ahead, gated (live legacy consumers, an active Kafka group), an invalid znode, a topic
// Kafka lacks, and topics shared between groups (so the description cache is used).
func manyGroups(n int) (*migratetest.LegacyStore, *migratetest.KafkaStore) {
	legacy := migratetest.NewLegacyStore()
	kafka := migratetest.NewKafkaStore()
	for i := range 4 {
		kafka.AddTopic(fmt.Sprintf("t%d", i), migrate.PartitionRange{LogStart: 0, LogEnd: 100}, migrate.PartitionRange{LogStart: 5, LogEnd: 50})
	}
	for i := range n {
		g := fmt.Sprintf("g%03d", i)
		lg := migrate.LegacyGroup{Group: g}
		for p := range int32(2) {
			lg.Offsets = append(lg.Offsets, off(g, fmt.Sprintf("t%d", i%4), p, int64(10+i)))
		}
		switch i % 6 {
		case 1:
			kafka.SetCommitted(g, fmt.Sprintf("t%d", i%4), 0, int64(10+i))
		case 2:
			kafka.SetCommitted(g, fmt.Sprintf("t%d", i%4), 1, 99)
		case 3:
			lg.LiveConsumers = []string{"c-" + g}
		case 4:
			kafka.SetGroup(g, "Stable", 2)
		case 5:
			bad := off(g, "t0", 7, 0)
			bad.Invalid = "sentinel -1"
			lg.Offsets = append(lg.Offsets, bad, off(g, "missing-topic", 0, 3))
		}
		legacy.SetGroup(lg)
	}
	return legacy, kafka
}

// collectSink keeps what a streamed plan hands over and how.
type collectSink struct {
	head   migrate.Plan
	heads  int
	chunks []int
	groups []migrate.GroupPlan
}

func (s *collectSink) Head(p migrate.Plan) error { s.head = p; s.heads++; return nil }
func (s *collectSink) Groups(gs []migrate.GroupPlan) error {
	s.chunks = append(s.chunks, len(gs))
	s.groups = append(s.groups, gs...)
	return nil
}

// TestPlannerMatchesBuild: the streamed plan is Build's plan over ReadInputs, with the same
// fingerprint and summary, at every chunk boundary (0, 1, chunk-1, chunk, chunk+1 groups and
// more), with and without a topic filter that drops groups.
func TestPlannerMatchesBuild(t *testing.T) {
	const chunk = 4
	// Translated: the same stores read through a translation into a "target" that names its
	// topics as the source does, t1 replicated from offset 12 on, t2 not at all.
	tr := migratetest.Translator{Start: map[migrate.TopicPartition]int64{}}
	for _, t := range []string{"t0", "t1", "t3", "missing-topic"} {
		for p := range int32(8) {
			tr.Start[migrate.TopicPartition{Topic: t, Partition: p}] = map[bool]int64{true: 12}[t == "t1"]
		}
	}
	for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 3*chunk + 2} {
		for _, topicRe := range []string{"", "^t[01]$"} {
			for _, translated := range []bool{false, true} {
				t.Run(fmt.Sprintf("groups=%d/topics=%q/translated=%v", n, topicRe, translated), func(t *testing.T) {
					var legacy migrate.LegacyStore
					legacy, kafka := manyGroups(n)
					if translated {
						legacy = migrate.Translated(legacy, tr)
					}
					f, err := migrate.NewFilter(nil, "", topicRe, "")
					if err != nil {
						t.Fatal(err)
					}
					f.AllowEmpty = true // groups=0
					in, err := migrate.ReadInputs(t.Context(), legacy, kafka, f)
					if err != nil {
						t.Fatal(err)
					}
					want := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
					sink := &collectSink{}
					pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Filter: f, Policy: migrate.DefaultPolicy(), ChunkGroups: chunk}
					tail, err := pl.Stream(t.Context(), migratetest.Now, sink)
					if err != nil {
						t.Fatalf("Stream: %v", err)
					}
					if tail.Fingerprint != want.Fingerprint || tail.Fingerprint != migrate.Fingerprint(in) {
						t.Errorf("fingerprint %s, Build's %s", tail.Fingerprint, want.Fingerprint)
					}
					if !reflect.DeepEqual(tail.Summary, want.Summary()) || tail.Safe() != want.Safe() {
						t.Errorf("summary %+v safe %v, Build's %+v safe %v", tail.Summary, tail.Safe(), want.Summary(), want.Safe())
					}
					got := sink.head
					got.Groups, got.Fingerprint = sink.groups, tail.Fingerprint
					if got.Groups == nil {
						got.Groups = []migrate.GroupPlan{}
					}
					if sink.heads != 1 || !reflect.DeepEqual(got, want) {
						t.Fatalf("streamed plan (%d heads):\n%+v\nBuild:\n%+v", sink.heads, got, want)
					}
					for _, c := range sink.chunks {
						if c < 1 || c > chunk {
							t.Errorf("a chunk of %d groups, want 1..%d: %v", c, chunk, sink.chunks)
						}
					}
				})
			}
		}
	}
}

// TestPlannerStopsOnLateError: a read failing in a late chunk is an error, with no tail.
func TestPlannerStopsOnLateError(t *testing.T) {
	legacy, kafka := manyGroups(10)
	legacy.FailRead("g009", errors.New("connection loss"))
	pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Policy: migrate.DefaultPolicy(), ChunkGroups: 3}
	sink := &collectSink{}
	tail, err := pl.Stream(t.Context(), migratetest.Now, sink)
	if err == nil || !strings.Contains(err.Error(), "connection loss") || tail.Fingerprint != "" {
		t.Fatalf("Stream = %+v, %v; want the read error and no tail", tail, err)
	}
	if len(sink.groups) > 9 {
		t.Errorf("%d groups handed over, but g009 was never read", len(sink.groups))
	}
}

// stalledRetention is a Kafka whose retention read answers only when cancelled, as one being
// retried while unreachable.
type stalledRetention struct{ migrate.KafkaState }

func (stalledRetention) OffsetsRetention(ctx context.Context) (time.Duration, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestPlannerListingErrorStopsTheRetentionRead: the retention is read while the groups are
// listed; a listing or selection that fails is reported at once, without waiting for Kafka, and
// a failing retention read is reported when the listing succeeds.
func TestPlannerListingErrorStopsTheRetentionRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(*migratetest.LegacyStore, *migratetest.KafkaStore) migrate.KafkaState
		groups  []string
		wantErr string
		wantIs  error
	}{
		{name: "listing fails", wantErr: "list legacy groups: zk down",
			setup: func(l *migratetest.LegacyStore, k *migratetest.KafkaStore) migrate.KafkaState {
				l.FailList(errors.New("zk down"))
				return stalledRetention{k}
			}},
		{name: "named group missing", groups: []string{"svc-typo"}, wantErr: `"svc-typo"`, wantIs: migrate.ErrGroupNotFound,
			setup: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) migrate.KafkaState {
				return stalledRetention{k}
			}},
		{name: "retention fails", wantErr: "read offsets retention from kafka: broker down",
			setup: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) migrate.KafkaState {
				k.FailReads(errors.New("broker down"))
				return k
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := manyGroups(3)
			f, err := migrate.NewFilter(tc.groups, "", "", "")
			if err != nil {
				t.Fatal(err)
			}
			pl := &migrate.Planner{Legacy: legacy, Kafka: tc.setup(legacy, kafka), Filter: f, Policy: migrate.DefaultPolicy()}
			sink := &collectSink{}
			done := make(chan error, 1)
			go func() {
				_, err := pl.Stream(t.Context(), migratetest.Now, sink)
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a hang guard, not a timing
				t.Fatal("Stream is still waiting for the retention read")
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || (tc.wantIs != nil && !errors.Is(err, tc.wantIs)) {
				t.Fatalf("Stream: %v, want an error containing %q", err, tc.wantErr)
			}
			if sink.heads != 0 || len(sink.groups) != 0 {
				t.Errorf("the sink got %d heads and %d groups before the error", sink.heads, len(sink.groups))
			}
		})
	}
}

// TestPlanFileWriterSameBytes: a plan file written group by group is byte for byte EncodePlan's.
func TestPlanFileWriterSameBytes(t *testing.T) {
	for _, n := range []int{0, 1, 7} {
		legacy, kafka := manyGroups(n)
		in, err := migrate.ReadInputs(t.Context(), legacy, kafka, migrate.Filter{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
		var want bytes.Buffer
		if err := migratetest.EncodePlan(&want, plan); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "plan.json")
		w, err := planfile.Create(path, plan)
		if err != nil {
			t.Fatal(err)
		}
		for i := range plan.Groups { // one group at a time, the way a stream hands them over
			if err := w.Groups(plan.Groups[i : i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the plan file exists before Commit: %v", err)
		}
		if err := w.Commit(plan.Fingerprint); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%d groups: streamed file differs from EncodePlan:\n%s\nwant:\n%s", n, got, want.Bytes())
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".plan.json.tmp-*")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

// TestPlanFileWriterRefuses: groups out of order or repeated, a bad fingerprint: no file.
func TestPlanFileWriterRefuses(t *testing.T) {
	legacy, kafka := manyGroups(3)
	in, err := migrate.ReadInputs(t.Context(), legacy, kafka, migrate.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	plan := migratetest.MustBuild(t, in, migrate.DefaultPolicy())
	g := plan.Groups
	for name, tc := range map[string]struct {
		groups []migrate.GroupPlan
		fp     string
		want   string
	}{
		"out of order": {[]migrate.GroupPlan{g[1], g[0]}, plan.Fingerprint, "name order"},
		"repeated":     {[]migrate.GroupPlan{g[0], g[0]}, plan.Fingerprint, "twice"},
		"fingerprint":  {g, "sha256:nope", "fingerprint"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "plan.json")
			w, err := planfile.Create(path, plan)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Groups(tc.groups)
			if err == nil {
				err = w.Commit(tc.fp)
			} else if aerr := w.Abort(); aerr != nil {
				t.Fatal(aerr)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %q", err, tc.want)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("files left after a refused plan: %v", left)
			}
		})
	}
}
