package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/legacy"
)

// complete runs cobra's hidden __complete command and returns the candidates and the directive
// line (":4" is ShellCompDirectiveNoFileComp).
func complete(t *testing.T, stores storeOpener, args ...string) (candidates []string, directive string, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	d := defaultDeps(&out, &errb)
	d.stores = stores
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1], errb.String()
}

func TestCompleteFlagValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "plan", "--output", ""}, "table summary json csv"},
		{[]string{"migrate", "plan", "-o", "j"}, "table summary json csv"}, // the shell filters by prefix
		{[]string{"migrate", "verify", "--output", ""}, "table summary json junit"},
		{[]string{"migrate", "copy", "--output", ""}, "table json"},
		{[]string{"restore", "--output", ""}, "table json"},
		{[]string{"migrate", "plan", "--on-conflict", ""}, "max zk kafka fail"},
		{[]string{"migrate", "copy", "--out-of-range", ""}, "fail clamp skip"},
		{[]string{"migrate", "dual-commit", "--on-conflict", ""}, "max kafka fail"},
		{[]string{"migrate", "copy", "--recheck", ""}, "full gates"},
		{[]string{"restore", "--to", ""}, "kafka zk"},
		{[]string{"export", "--from", ""}, "zk kafka"},
		{[]string{"export", "--format", ""}, "json csv"},
		{[]string{"migrate", "plan", "--log-format", ""}, "text json"},
		{[]string{"--log-level", ""}, "debug info warn error"},
		{[]string{"migrate", "verify", "--kafka-sasl-mechanism", ""}, "PLAIN SCRAM-SHA-256 SCRAM-SHA-512 GSSAPI OAUTHBEARER"},
		{[]string{"migrate", "copy", "--target-kafka-sasl-mechanism", ""}, "PLAIN SCRAM-SHA-256 SCRAM-SHA-512 GSSAPI OAUTHBEARER"},
		{[]string{"migrate", "plan", "--replication-policy", ""}, "default identity"},
		{[]string{"migrate", "dual-commit", "--mm2-offset-syncs-location", ""}, "source target"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, directive, _ := complete(t, fixture(), tt.args...)
			if strings.Join(got, " ") != tt.want || directive != ":4" {
				t.Errorf("candidates %q %s, want %q :4", got, directive, tt.want)
			}
		})
	}
}

// failingStores cannot reach ZooKeeper.
type failingStores struct{ fakeStores }

func (failingStores) OpenLegacy(context.Context, *globalOptions, *deps) (*legacy.Source, error) {
	return nil, errors.New("zookeeper 127.0.0.1:1: every server refused the connection")
}

func TestCompleteGroups(t *testing.T) {
	f := fixture()
	f.legacy.SetOffset("billing", "t", 0, 1)
	tests := []struct {
		name   string
		stores storeOpener
		args   []string
		want   string
	}{
		{"all", f, []string{"migrate", "plan", "--group", ""}, "billing g1 g2"},
		{"prefix", f, []string{"migrate", "verify", "--group", "g"}, "g1 g2"},
		{"after a comma", f, []string{"export", "--group", "billing,g"}, "billing,g1 billing,g2"},
		{"zookeeper unreachable: nothing, silently", failingStores{f}, []string{"migrate", "plan", "--group", ""}, ""},
		{"bad setting: nothing, silently", f, []string{"migrate", "plan", "--log-level", "loud", "--group", ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive, stderr := complete(t, tt.stores, tt.args...)
			if strings.Join(got, " ") != tt.want || directive != ":4" {
				t.Errorf("candidates %q %s, want %q :4", got, directive, tt.want)
			}
			if strings.Contains(stderr, "zookeeper") || strings.Contains(stderr, "loud") {
				t.Errorf("completion printed an error: %q", stderr)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"migrat"}, "unknown command \"migrat\" for \"zk2kafka\"\n\nDid you mean this?\n\tmigrate\n"},
		{[]string{"migrate", "plann"}, "unknown command \"plann\" for \"zk2kafka migrate\"\n\nDid you mean this?\n\tplan\n"},
		{[]string{"migrate", "verfy"}, "unknown command \"verfy\" for \"zk2kafka migrate\"\n\nDid you mean this?\n\tverify\n"},
		{[]string{"migrate", "dual"}, "unknown command \"dual\" for \"zk2kafka migrate\"\n\nDid you mean this?\n\tdual-commit\n"},
		{[]string{"migrate", "copy", "--exectue"}, "unknown flag: --exectue\n\nDid you mean this?\n\t--execute\n"},
		{[]string{"restore", "--too", "zk"}, "unknown flag: --too\n\nDid you mean this?\n\t--to\n"},
		{[]string{"migrate", "plan", "--on-conflcit", "max"}, "unknown flag: --on-conflcit\n\nDid you mean this?\n\t--on-conflict\n"},
		{[]string{"migrate", "plan", "--zk-sesion-timeout", "5s"}, "unknown flag: --zk-sesion-timeout\n\nDid you mean this?\n\t--zk-session-timeout\n"},
		{[]string{"migrate", "plan", "--nothing-like-it"}, "unknown flag: --nothing-like-it"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := run(t, fixture(), tt.args...)
			if code != ExitError || stderr != tt.want {
				t.Errorf("exit %d, stderr %q\nwant exit 1, %q", code, stderr, tt.want)
			}
		})
	}
}
