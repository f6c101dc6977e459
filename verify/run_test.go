package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// markingLegacy is the in-memory legacy store with the write side verify --mark needs.
type markingLegacy struct {
	*migratetest.LegacyStore
	mu      sync.Mutex
	markers map[string][]byte
	failOn  string // MarkMigrated of this group fails
}

func (m *markingLegacy) WriteOffsets(context.Context, string, map[migrate.TopicPartition]int64) error {
	return errors.New("verify must not write offsets")
}

func (m *markingLegacy) AdvanceOffsets(context.Context, string, map[migrate.TopicPartition]int64) (map[migrate.TopicPartition]string, error) {
	return nil, errors.New("verify must not write offsets")
}

func (m *markingLegacy) MarkMigrated(_ context.Context, group string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if group == m.failOn {
		return errBoom
	}
	m.markers[group] = bytes.Clone(data)
	return nil
}

func (m *markingLegacy) Marker(_ context.Context, group string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.markers[group]
	return d, ok, nil
}

// viaSource is a migrate.CommittedSource over fixed answers; asked records the groups asked.
type viaSource struct {
	committed map[string]map[migrate.TopicPartition]int64
	asked     *[]string
}

func (s viaSource) Committed(_ context.Context, groups []string) (map[string]migrate.GroupState, error) {
	if s.asked != nil {
		*s.asked = append(*s.asked, groups...)
	}
	out := map[string]migrate.GroupState{}
	for _, g := range groups {
		if c, ok := s.committed[g]; ok {
			out[g] = migrate.GroupState{Committed: c}
		}
	}
	return out, nil
}

var errBoom = errors.New("boom")

var checkedAt = time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))

// runFixture: g1 holds t/0 10 and t/1 20 in both stores; g2 t/0 5 in both, with a live legacy
// consumer; g3 has no offsets; topic t has two partitions, log range [0, 100].
func runFixture() (*markingLegacy, *migratetest.KafkaStore) {
	l := &markingLegacy{LegacyStore: migratetest.NewLegacyStore(), markers: map[string][]byte{}}
	l.SetOffset("g1", "t", 0, 10)
	l.SetOffset("g1", "t", 1, 20)
	l.SetOffset("g2", "t", 0, 5)
	l.SetLive("g2", "ids/c1")
	l.SetGroup(migrate.LegacyGroup{Group: "g3"})
	k := migratetest.NewKafkaStore()
	r := migrate.PartitionRange{LogStart: 0, LogEnd: 100}
	k.AddTopic("t", r, r)
	k.SetCommitted("g1", "t", 0, 10)
	k.SetCommitted("g1", "t", 1, 20)
	k.SetCommitted("g2", "t", 0, 5)
	return l, k
}

func mustFilter(t *testing.T, topicRe string, gm migrate.GroupMap) migrate.Filter {
	t.Helper()
	f, err := migrate.NewFilter(nil, "", topicRe, "")
	if err != nil {
		t.Fatal(err)
	}
	f.GroupMap = gm
	return f
}

// statuses is "group topic/partition status" per partition of r.
func statuses(r Report) []string {
	var out []string
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			out = append(out, fmt.Sprintf("%s %s/%d %s", g.Label(), p.Topic, p.Partition, p.Status))
		}
	}
	return out
}

func TestRunCompares(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*markingLegacy, *migratetest.KafkaStore)
		req     func(*Request)
		want    []string
		pass    bool
		wantErr string
	}{
		{name: "pass", pass: true,
			want: []string{"g1 t/0 match", "g1 t/1 match", "g2 t/0 match"}},
		{name: "drift", pass: false,
			mutate: func(l *markingLegacy, _ *migratetest.KafkaStore) { l.SetOffset("g1", "t", 1, 25) },
			want:   []string{"g1 t/0 match", "g1 t/1 kafka-behind", "g2 t/0 match"}},
		{name: "strict fails kafka ahead", pass: false,
			mutate: func(_ *markingLegacy, k *migratetest.KafkaStore) { k.SetCommitted("g2", "t", 0, 6) },
			req:    func(r *Request) { r.Options.Strict = true },
			want:   []string{"g1 t/0 match", "g1 t/1 match", "g2 t/0 kafka-ahead"}},
		{name: "via topic replaces the OffsetFetch commits", pass: false,
			req: func(r *Request) {
				r.ViaTopic = true
				r.Committed = viaSource{committed: map[string]map[migrate.TopicPartition]int64{
					"g1": {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20},
					"g2": {{Topic: "t", Partition: 0}: 4}, "g3": {},
				}}
			},
			want: []string{"g1 t/0 match", "g1 t/1 match", "g2 t/0 kafka-behind"}},
		{name: "via topic without a commit the OffsetFetch has", pass: false,
			req: func(r *Request) {
				r.ViaTopic = true
				r.Committed = viaSource{committed: map[string]map[migrate.TopicPartition]int64{
					"g1": {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20}, "g2": {}, "g3": {},
				}}
			},
			want: []string{"g1 t/0 match", "g1 t/1 match", "g2 t/0 missing-in-kafka"}},
		{name: "via topic missing a group", wantErr: `--via-topic: no answer for group "g2"`,
			req: func(r *Request) {
				r.ViaTopic = true
				r.Committed = viaSource{committed: map[string]map[migrate.TopicPartition]int64{"g1": {}, "g3": {}}}
			}},
		{name: "a commit of a topic only kafka has is checked against its log", pass: false,
			mutate: func(_ *markingLegacy, k *migratetest.KafkaStore) {
				k.AddTopic("u", migrate.PartitionRange{LogStart: 50, LogEnd: 60})
				k.SetCommitted("g1", "u", 0, 10)
			},
			want: []string{"g1 t/0 match", "g1 t/1 match", "g1 u/0 kafka-out-of-range", "g2 t/0 match"}},
		{name: "a topic only kafka has, outside the topic filter, is neither compared nor described", pass: true,
			mutate: func(_ *markingLegacy, k *migratetest.KafkaStore) {
				k.AddTopic("u", migrate.PartitionRange{LogStart: 50, LogEnd: 60})
				k.SetCommitted("g1", "u", 0, 10)
			},
			req:  func(r *Request) { r.Filter = mustFilter(t, "^t$", nil) },
			want: []string{"g1 t/0 match", "g1 t/1 match", "g2 t/0 match"}},
		{name: "describing the topics only kafka has fails", wantErr: "describe 1 topics in kafka for their log ranges: boom",
			mutate: func(_ *markingLegacy, k *migratetest.KafkaStore) {
				k.SetCommitted("g1", "u", 0, 10)
			},
			req: func(r *Request) { r.Kafka = failTopicsAfterFirst{KafkaStore: r.Kafka.(*migratetest.KafkaStore)} }},
		{name: "group map: compared with the mapped group, via topic asks for it", pass: true,
			mutate: func(_ *markingLegacy, k *migratetest.KafkaStore) {
				k.SetCommitted("new1", "t", 0, 10)
				k.SetCommitted("new1", "t", 1, 20)
			},
			req: func(r *Request) {
				r.Filter = mustFilter(t, "", migrate.GroupMap{"g1": "new1"})
				r.ViaTopic = true
				r.Committed = viaSource{committed: map[string]map[migrate.TopicPartition]int64{
					"new1": {{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 20},
					"g2":   {{Topic: "t", Partition: 0}: 5}, "g3": {},
				}}
			},
			want: []string{"g1 -> new1 t/0 match", "g1 -> new1 t/1 match", "g2 t/0 match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, k := runFixture()
			if tc.mutate != nil {
				tc.mutate(l, k)
			}
			var progress, done int
			req := Request{Legacy: l, Kafka: k, Filter: mustFilter(t, "", nil), Now: func() time.Time { return checkedAt },
				ReadProgress: func(migrate.ReadProgress) { progress++ }, ReadDone: func() { done++ }}
			if tc.req != nil {
				tc.req(&req)
			}
			r, err := Run(context.Background(), req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(r); !slices.Equal(got, tc.want) || r.Pass != tc.pass {
				t.Errorf("statuses %q pass %t, want %q pass %t", got, r.Pass, tc.want, tc.pass)
			}
			if !r.CheckedAt.Equal(checkedAt) || r.CheckedAt.Location() != time.UTC {
				t.Errorf("CheckedAt %v, want %v in UTC", r.CheckedAt, checkedAt)
			}
			if progress == 0 || done != 1 {
				t.Errorf("read progress called %d times, read done %d times", progress, done)
			}
			if len(l.markers) != 0 || len(k.Commits()) != 0 {
				t.Errorf("verify without --mark wrote: markers %v, commits %v", l.markers, k.Commits())
			}
		})
	}
}

// failTopicsAfterFirst fails every Topics call after ReadInputs' own: the describe of the
// topics only Kafka has.
type failTopicsAfterFirst struct {
	*migratetest.KafkaStore
}

func (f failTopicsAfterFirst) Topics(ctx context.Context, topics []string) (map[string]migrate.TopicInfo, error) {
	if n, _ := f.Calls(); n > 0 {
		return nil, errBoom
	}
	return f.KafkaStore.Topics(ctx, topics)
}

func TestRunMarks(t *testing.T) {
	l, k := runFixture()
	l.SetOffset("g4", "t", 0, 7) // fails: Kafka has no commit
	var logs bytes.Buffer
	r, err := Run(context.Background(), Request{Legacy: l, Kafka: k, Filter: mustFilter(t, "", nil), Mark: true, Writer: l,
		Version: "v1.2.3", Now: func() time.Time { return checkedAt }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// Only g1 may be marked: g2 has a live legacy consumer, g3 no offsets, g4 fails.
	want := `{"migrated_at":"2025-03-04T04:06:07Z","tool":"zk2kafka v1.2.3","offsets":2}`
	if got := string(l.markers["g1"]); got != want || len(l.markers) != 1 {
		t.Errorf("markers %q, want only g1 with %s", l.markers, want)
	}
	for _, g := range r.Groups {
		if g.Marked != (g.Group == "g1") {
			t.Errorf("group %s Marked %t", g.Group, g.Marked)
		}
	}
	for _, w := range []string{`"not marking a group that still has live legacy consumers" group=g2 live=1`,
		`"not marking a group without offsets: nothing was verified" group=g3`, `"group marked migrated" group=g1 offsets=2`} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %s:\n%s", w, logs.String())
		}
	}
	if strings.Contains(logs.String(), "group=g4") {
		t.Errorf("a failing group is logged as not marked:\n%s", logs.String())
	}
}

func TestRunMarkFailure(t *testing.T) {
	l, k := runFixture()
	l.SetLive("g2") // g1 and g2 both pass now: g1 is marked first, g2 fails
	l.failOn = "g2"
	r, err := Run(context.Background(), Request{Legacy: l, Kafka: k, Filter: mustFilter(t, "", nil), Mark: true, Writer: l})
	var me *MarkError
	if !errors.As(err, &me) || me.Group != "g2" || !errors.Is(err, errBoom) || !strings.Contains(err.Error(), `group "g2"`) {
		t.Fatalf("error %v, want a MarkError of g2 wrapping boom", err)
	}
	if len(r.Groups) != 3 || !r.Groups[0].Marked || r.Groups[1].Marked || len(l.markers) != 1 {
		t.Errorf("report %+v, markers %q: want g1 marked, g2 not", r.Groups, l.markers)
	}
}

// TestRunRefuses: every input the CLI refuses, Run refuses too, before reading either store.
func TestRunRefuses(t *testing.T) {
	lead := func(n int64) *int64 { return &n }
	cases := []struct {
		name    string
		req     func(*Request)
		wantErr string
	}{
		{name: "mark under a topic filter", wantErr: "--mark with --topic-regex",
			req: func(r *Request) { r.Mark, r.Filter = true, mustFilter(t, "^t$", nil) }},
		{name: "mark without a writer", wantErr: "--mark: the legacy store cannot write",
			req: func(r *Request) { r.Mark, r.Writer = true, nil }},
		{name: "max lead with strict", wantErr: "--max-kafka-lead with --strict",
			req: func(r *Request) { r.Options.Strict, r.Options.MaxKafkaLead = true, lead(3) }},
		{name: "max lead zero with strict", wantErr: "--max-kafka-lead with --strict",
			req: func(r *Request) { r.Options.Strict, r.Options.MaxKafkaLead = true, lead(0) }},
		{name: "negative max lead", wantErr: "--max-kafka-lead: -1 is negative",
			req: func(r *Request) { r.Options.MaxKafkaLead = lead(-1) }},
		{name: "via topic without a source", wantErr: "--via-topic: no source",
			req: func(r *Request) { r.ViaTopic, r.Committed = true, nil }},
		{name: "no legacy store", wantErr: "no legacy store", req: func(r *Request) { r.Legacy = nil }},
		{name: "no kafka state", wantErr: "no Kafka state", req: func(r *Request) { r.Kafka = nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, k := runFixture()
			req := Request{Legacy: l, Kafka: k, Filter: mustFilter(t, "", nil), Writer: l}
			tc.req(&req)
			r, err := Run(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			topics, groups := k.Calls()
			if l.ReadCalls() != 0 || topics+groups != 0 || len(l.markers) != 0 || r.Groups != nil {
				t.Errorf("refused after reading or writing: %d legacy reads, %d kafka reads, markers %q, report %+v",
					l.ReadCalls(), topics+groups, l.markers, r)
			}
		})
	}
}

// TestOptionsValidate: the CLI's validate and Run share these checks, and so their messages.
func TestOptionsValidate(t *testing.T) {
	zero, five, neg := int64(0), int64(5), int64(-2)
	cases := []struct {
		opts    Options
		wantErr string
	}{
		{Options{}, ""},
		{Options{Strict: true}, ""},
		{Options{MaxKafkaLead: &zero}, ""},
		{Options{MaxKafkaLead: &five}, ""},
		{Options{MaxKafkaLead: &neg}, "-2 is negative"},
		{Options{Strict: true, MaxKafkaLead: &five}, "--strict already allows no lead"},
	}
	for _, tc := range cases {
		err := tc.opts.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.wantErr)
		}
	}
}
