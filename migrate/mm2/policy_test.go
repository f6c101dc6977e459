package mm2

import (
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	cases := []struct {
		name          string
		policy        Policy
		source        string
		target        string
		back          string // Source(target); "" for none
		invalid       string
		foreignTarget string // a target name the policy maps back to no source topic
	}{
		{name: "default", policy: Policy{Name: PolicyDefault, SourceAlias: "east"}, source: "orders", target: "east.orders", back: "orders", foreignTarget: "west.orders"},
		{name: "default with a separator", policy: Policy{Name: PolicyDefault, SourceAlias: "east", Separator: "__"}, source: "a.b", target: "east__a.b", back: "a.b", foreignTarget: "east.a.b"},
		{name: "identity", policy: Policy{Name: PolicyIdentity}, source: "orders", target: "orders", back: "orders"},
		{name: "default without an alias", policy: Policy{Name: PolicyDefault}, invalid: "source alias"},
		{name: "an unknown policy", policy: Policy{Name: "custom", SourceAlias: "east"}, invalid: `replication policy "custom"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if tc.invalid != "" {
				if err == nil || !strings.Contains(err.Error(), tc.invalid) {
					t.Fatalf("Validate = %v, want an error with %q", err, tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.policy.Topic(tc.source); got != tc.target {
				t.Errorf("Topic(%q) = %q, want %q", tc.source, got, tc.target)
			}
			if got, ok := tc.policy.Source(tc.target); !ok || got != tc.back {
				t.Errorf("Source(%q) = %q, %v; want %q", tc.target, got, ok, tc.back)
			}
			if tc.foreignTarget != "" {
				if got, ok := tc.policy.Source(tc.foreignTarget); ok {
					t.Errorf("Source(%q) = %q, want none", tc.foreignTarget, got)
				}
			}
		})
	}
}
