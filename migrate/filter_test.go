package migrate_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestFilterMatch(t *testing.T) {
	tests := []struct {
		name                string
		groups              []string
		groupRe, topicRe, x string
		in, out             []string // groups selected / not selected
		topicsIn, topicsOut []string
	}{
		{name: "zero filter selects all", in: []string{"a", "b"}, topicsIn: []string{"t", ""}},
		{name: "exact names", groups: []string{"a", "c", "a"}, in: []string{"a", "c"}, out: []string{"b", "aa", "A"}},
		{name: "regex is unanchored", groupRe: "svc", in: []string{"svc", "old-svc-1"}, out: []string{"sv"}},
		{name: "anchored regex", groupRe: "^svc$", in: []string{"svc"}, out: []string{"svc2", "xsvc"}},
		{name: "names or regex", groups: []string{"legacy"}, groupRe: "^svc-", in: []string{"legacy", "svc-1"}, out: []string{"other"}},
		{name: "exclude wins over names", groups: []string{"a", "b"}, x: "^b$", in: []string{"a"}, out: []string{"b"}},
		{name: "exclude alone", x: "^test-", in: []string{"prod"}, out: []string{"test-1"}},
		{name: "topic regex", topicRe: "^orders", topicsIn: []string{"orders", "orders-v2"}, topicsOut: []string{"old-orders"},
			in: []string{"any"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := migrate.NewFilter(tt.groups, tt.groupRe, tt.topicRe, tt.x)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tt.in {
				if !f.MatchGroup(g) {
					t.Errorf("MatchGroup(%q) = false, want true", g)
				}
			}
			for _, g := range tt.out {
				if f.MatchGroup(g) {
					t.Errorf("MatchGroup(%q) = true, want false", g)
				}
			}
			for _, tp := range tt.topicsIn {
				if !f.MatchTopic(tp) {
					t.Errorf("MatchTopic(%q) = false, want true", tp)
				}
			}
			for _, tp := range tt.topicsOut {
				if f.MatchTopic(tp) {
					t.Errorf("MatchTopic(%q) = true, want false", tp)
				}
			}
			// The spec is what a plan stores: compiling it again gives the same filter.
			g, err := migrate.NewFilterFromSpec(f.Spec())
			if err != nil || !reflect.DeepEqual(g.Spec(), f.Spec()) {
				t.Errorf("spec round trip: %+v, %v; want %+v", g.Spec(), err, f.Spec())
			}
		})
	}
}

func TestFilterSpecIsCanonical(t *testing.T) {
	f, err := migrate.NewFilter([]string{"b", "a", "b"}, "g", "t", "x")
	if err != nil {
		t.Fatal(err)
	}
	want := migrate.FilterSpec{Groups: []string{"a", "b"}, GroupRegex: "g", TopicRegex: "t", ExcludeGroupRegex: "x"}
	if got := f.Spec(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Spec = %+v, want %+v", got, want)
	}
	if got := (migrate.Filter{}).Spec(); !reflect.DeepEqual(got, migrate.FilterSpec{}) {
		t.Fatalf("zero Spec = %+v", got)
	}
}

func TestNewFilterErrors(t *testing.T) {
	tests := []struct {
		name                string
		groups              []string
		groupRe, topicRe, x string
		want                string
	}{
		{"bad group regex", nil, "(", "", "", `invalid --group-regex "("`},
		{"bad topic regex", nil, "", "[a-", "", `invalid --topic-regex "[a-"`},
		{"bad exclude regex", nil, "", "", "*", `invalid --exclude-group-regex "*"`},
		{"empty group name", []string{"a", ""}, "", "", "", "--group: empty group name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := migrate.NewFilter(tt.groups, tt.groupRe, tt.topicRe, tt.x)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewFilter error = %v, want %q", err, tt.want)
			}
		})
	}
}
