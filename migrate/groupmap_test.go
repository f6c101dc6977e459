package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func TestParseGroupMap(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		file    string // "" for none
		want    migrate.GroupMap
		wantErr string // substring; "" for success
	}{
		{name: "nothing", want: nil},
		{name: "flags", flags: []string{"old=new", "a=b"}, want: migrate.GroupMap{"old": "new", "a": "b"}},
		{name: "split at the first =", flags: []string{"a=b=c"}, want: migrate.GroupMap{"a": "b=c"}},
		{name: "identity is kept and harmless", flags: []string{"a=a"}, want: migrate.GroupMap{"a": "a"}},
		{name: "same pair twice is one mapping", flags: []string{"a=b", "a=b"}, want: migrate.GroupMap{"a": "b"}},
		{name: "merge of two legacy groups is allowed by the map", flags: []string{"a=k", "b=k"}, want: migrate.GroupMap{"a": "k", "b": "k"}},
		{name: "no =", flags: []string{"ab"}, wantErr: `--group-map "ab": expected old=new`},
		{name: "empty old", flags: []string{"=b"}, wantErr: "empty legacy group name"},
		{name: "empty new", flags: []string{"a="}, wantErr: "empty kafka group name"},
		{name: "white space", flags: []string{"a= b"}, wantErr: "white space"},
		{name: "slash in a legacy name", flags: []string{"a/b=c"}, wantErr: `has a "/"`},
		{name: "mapped twice", flags: []string{"a=b", "a=c"}, wantErr: `legacy group "a" is mapped twice: to "c" here and to "b" at --group-map "a=b"`},
		{name: "chain", flags: []string{"a=b", "b=c"}, wantErr: `legacy group "a" maps to "b", which is itself mapped to "c"`},
		{name: "swap is a chain", flags: []string{"a=b", "b=a"}, wantErr: "mappings are not chained"},
		{name: "target mapped to itself is not a chain", flags: []string{"a=b", "b=b"}, want: migrate.GroupMap{"a": "b", "b": "b"}},
		{name: "csv", file: "# old,new\nold,new\n\n\"with,comma\",x\n", want: migrate.GroupMap{"old": "new", "with,comma": "x"}},
		{name: "csv and flags together", flags: []string{"a=b"}, file: "c,d\n", want: migrate.GroupMap{"a": "b", "c": "d"}},
		{name: "csv three fields", file: "a,b\nc,d,e\n", wantErr: "groups.csv: line 2: 3 field(s), expected 2"},
		{name: "csv one field", file: "a,b\n\nc\n", wantErr: "groups.csv: line 3: 1 field(s), expected 2"},
		{name: "csv white space", file: "a,b\nc, d\n", wantErr: "groups.csv: line 2: kafka group name \" d\" has white space"},
		{name: "csv bad quote", file: "a,b\n\"c,d\n", wantErr: "groups.csv: line 2"},
		{name: "csv conflicts with a flag", flags: []string{"a=b"}, file: "a,c\n", wantErr: `groups.csv: line 1: legacy group "a" is mapped twice`},
		{name: "csv empty", file: "# nothing\n", wantErr: "groups.csv: no mapping in it"},
		{name: "csv chain", file: "a,b\nb,c\n", wantErr: "mappings are not chained"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var content *strings.Reader
			name := ""
			if tc.file != "" {
				content, name = strings.NewReader(tc.file), "groups.csv"
			}
			var got migrate.GroupMap
			var err error
			if content != nil {
				got, err = migrate.ParseGroupMap(tc.flags, name, content)
			} else {
				got, err = migrate.ParseGroupMap(tc.flags, "", nil)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("map %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlanUnderGroupMap(t *testing.T) {
	cases := []struct {
		name   string
		m      migrate.GroupMap
		setup  func(l *migratetest.LegacyStore, k *migratetest.KafkaStore)
		want   map[string]string // legacy group -> kafka_group ("" when not renamed)
		gates  map[string][]migrate.Gate
		err    string
		errAs  bool // the error is a MergeOverlapError
		kafkaG int  // Kafka Groups calls asked (not checked when 0)
	}{
		{name: "renamed group reads the new group's state", m: migrate.GroupMap{"old": "new"},
			setup: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetCommitted("new", "t", 0, 5) },
			want:  map[string]string{"old": "new", "other": ""}},
		{name: "active new group gates the legacy group", m: migrate.GroupMap{"old": "new"},
			setup: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("new", "Stable", 1) },
			want:  map[string]string{"old": "new", "other": ""},
			gates: map[string][]migrate.Gate{"old": {migrate.GateKafkaGroupActive}}},
		{name: "active old Kafka group does not gate a renamed group", m: migrate.GroupMap{"old": "new"},
			setup: func(_ *migratetest.LegacyStore, k *migratetest.KafkaStore) { k.SetGroup("old", "Stable", 1) },
			want:  map[string]string{"old": "new", "other": ""}},
		{name: "live legacy consumer of the old group gates it", m: migrate.GroupMap{"old": "new"},
			setup: func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.SetLive("old", "ids/c1") },
			want:  map[string]string{"old": "new", "other": ""},
			gates: map[string][]migrate.Gate{"old": {migrate.GateLegacyConsumersAlive}}},
		{name: "disjoint merge is planned", m: migrate.GroupMap{"old": "k", "other": "k"},
			want: map[string]string{"old": "k", "other": "k"}},
		{name: "merge into an existing legacy name is planned when disjoint", m: migrate.GroupMap{"old": "other"},
			want: map[string]string{"old": "other", "other": ""}},
		{name: "overlapping merge is refused", m: migrate.GroupMap{"old": "k", "other": "k"},
			setup: func(l *migratetest.LegacyStore, _ *migratetest.KafkaStore) { l.SetOffset("other", "t", 1, 7) },
			err:   `legacy groups "old" and "other" both land in Kafka group "k" and both hold topic "t" partition 1`, errAs: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy, kafka := migratetest.MapStores()
			if tc.setup != nil {
				tc.setup(legacy, kafka)
			}
			f := migratetest.MapFilter(t, tc.m)
			// Both paths to a plan: ReadInputs+Build and the streamed Planner.
			in, err := migrate.ReadInputs(context.Background(), legacy, kafka, f)
			var p migrate.Plan
			if err == nil {
				p, err = migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
			}
			sink := &mapSink{}
			pl := &migrate.Planner{Legacy: legacy, Kafka: kafka, Filter: f, Policy: migrate.DefaultPolicy()}
			tail, serr := pl.Stream(context.Background(), time.Unix(0, 0), sink)
			if tc.err != "" {
				for _, e := range []error{err, serr} {
					if e == nil || !strings.Contains(e.Error(), tc.err) {
						t.Fatalf("error %v, want one containing %q", e, tc.err)
					}
					var oe *migrate.MergeOverlapError
					if tc.errAs != errors.As(e, &oe) {
						t.Fatalf("error %v: MergeOverlapError %v, want %v", e, !tc.errAs, tc.errAs)
					}
				}
				return
			}
			if err != nil || serr != nil {
				t.Fatal(err, serr)
			}
			if tail.Fingerprint != p.Fingerprint {
				t.Fatalf("streamed fingerprint %s, built %s", tail.Fingerprint, p.Fingerprint)
			}
			for _, gs := range [][]migrate.GroupPlan{p.Groups, sink.groups} {
				got := map[string]string{}
				for _, g := range gs {
					got[g.Group] = g.KafkaGroup
					if w := tc.gates[g.Group]; !slicesEqual(g.Gates, w) {
						t.Errorf("group %s gates %v, want %v", g.Group, g.Gates, w)
					}
				}
				if !maps.Equal(got, tc.want) {
					t.Fatalf("kafka groups %v, want %v", got, tc.want)
				}
			}
			if tc.name == "renamed group reads the new group's state" {
				e := p.Groups[0].Entries[0]
				if e.Kafka == nil || *e.Kafka != 5 {
					t.Fatalf("old t/0 compared with Kafka %v, want new's commit 5", e.Kafka)
				}
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("the plan does not validate: %v", err)
			}
		})
	}
}

func slicesEqual(a, b []migrate.Gate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type mapSink struct{ groups []migrate.GroupPlan }

func (s *mapSink) Head(migrate.Plan) error { return nil }
func (s *mapSink) Groups(gs []migrate.GroupPlan) error {
	s.groups = append(s.groups, gs...)
	return nil
}

func TestMergeMustBeSelectedWhole(t *testing.T) {
	legacy, kafka := migratetest.MapStores()
	f := migratetest.MapFilter(t, migrate.GroupMap{"old": "k", "other": "k"})
	f.Groups = []string{"old"}
	_, err := migrate.ReadInputs(context.Background(), legacy, kafka, f)
	if err == nil || !strings.Contains(err.Error(), `legacy groups "old" and "other" both land in Kafka group "k", but the selection takes only "old"`) {
		t.Fatalf("error %v", err)
	}
	// Selected together, it is read.
	f.Groups = []string{"old", "other"}
	if _, err := migrate.ReadInputs(context.Background(), legacy, kafka, f); err != nil {
		t.Fatal(err)
	}
}

func TestFingerprintCoversGroupMap(t *testing.T) {
	legacy, kafka := migratetest.MapStores()
	fps := map[string]string{}
	for name, m := range map[string]migrate.GroupMap{
		"none": nil, "identity": {"old": "old"}, "old=new": {"old": "new"}, "old=other2": {"old": "other2"},
	} {
		in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migratetest.MapFilter(t, m))
		if err != nil {
			t.Fatal(err)
		}
		fps[name] = migrate.Fingerprint(in)
	}
	if fps["none"] != fps["identity"] {
		t.Errorf("an identity map changed the fingerprint")
	}
	if fps["none"] == fps["old=new"] || fps["old=new"] == fps["old=other2"] {
		t.Errorf("fingerprints do not tell the maps apart: %v", fps)
	}
}

func TestPlanFileGroupMapRoundTripAndEdits(t *testing.T) {
	legacy, kafka := migratetest.MapStores()
	in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migratetest.MapFilter(t, migrate.GroupMap{"old": "new"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := migratetest.Build(in, migrate.DefaultPolicy(), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := migratetest.EncodePlan(&buf, p); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, want := range []string{`"group_map": [`, `"legacy": "old"`, `"kafka": "new"`, `"kafka_group": "new"`} {
		if !strings.Contains(doc, want) {
			t.Fatalf("plan file lacks %s:\n%s", want, doc)
		}
	}
	back, err := migratetest.DecodePlan(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if back.Groups[0].KafkaGroup != "new" || back.Filter.KafkaGroup("old") != "new" {
		t.Fatalf("read back %+v", back.Groups[0])
	}
	edits := []struct{ name, from, to, err string }{
		{"kafka_group sent elsewhere", `"kafka_group": "new"`, `"kafka_group": "elsewhere"`, `kafka_group "elsewhere", but the plan's group map sends it to "new"`},
		{"kafka_group dropped", `"kafka_group": "new",`, ``, `kafka_group "", but the plan's group map sends it to "new"`},
		{"map entry to itself", `"kafka": "new"`, `"kafka": "old"`, `maps to itself`},
		{"unknown key in a pair", `"kafka": "new"`, `"kafka": "new", "x": 1`, `unknown field "x"`},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			edited := strings.Replace(doc, e.from, e.to, 1)
			if edited == doc {
				t.Fatalf("edit %q not applied", e.from)
			}
			_, err := migratetest.DecodePlan(strings.NewReader(edited))
			if err == nil || !strings.Contains(err.Error(), e.err) {
				t.Fatalf("error %v, want one containing %q", err, e.err)
			}
		})
	}
}

func TestOwnStatesSplitsAMerge(t *testing.T) {
	legacy, kafka := migratetest.MapStores()
	kafka.SetCommitted("k", "t", 0, 10)
	kafka.SetCommitted("k", "t", 2, 30)
	kafka.SetCommitted("k", "u", 0, 1) // neither legacy group holds it
	in, err := migrate.ReadInputs(context.Background(), legacy, kafka, migratetest.MapFilter(t, migrate.GroupMap{"old": "k", "other": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	own := in.OwnStates(in.Groups)
	want := map[string]map[migrate.TopicPartition]int64{
		"old":   {{Topic: "t", Partition: 0}: 10, {Topic: "u", Partition: 0}: 1},
		"other": {{Topic: "t", Partition: 2}: 30},
	}
	for g, w := range want {
		if !maps.Equal(own[g].Committed, w) {
			t.Errorf("%s: %v, want %v", g, own[g].Committed, w)
		}
	}
}

func TestMapKafkaNeverMapsTwice(t *testing.T) {
	_, kafka := migratetest.MapStores()
	kafka.SetCommitted("new", "t", 0, 1)
	m := migrate.GroupMap{"old": "new"}
	k := migrate.MapKafka(migrate.MapKafka(kafka, m), m)
	st, err := k.Groups(context.Background(), []string{"old"})
	if err != nil {
		t.Fatal(err)
	}
	if st["old"].Committed[migrate.TopicPartition{Topic: "t", Partition: 0}] != 1 {
		t.Fatalf("old reads %v, want new's commits", st["old"])
	}
	if migrate.MapKafka(kafka, nil) != migrate.KafkaState(kafka) {
		t.Fatalf("an empty map wrapped the store")
	}
	if err := (migrate.GroupMap{"a": "k", "b": "k"}).CheckNoMerge([]string{"a", "b"}); err == nil {
		t.Fatal("CheckNoMerge let a merge through")
	}
	if err := (migrate.GroupMap{"a": "k", "b": "k"}).CheckNoMerge([]string{"a"}); err != nil {
		t.Fatal(err)
	}
}
