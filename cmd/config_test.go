package cmd

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// runProbe runs the root command with a probe subcommand that only records the resolved options.
func runProbe(t *testing.T, args []string, env map[string]string) (*globalOptions, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out bytes.Buffer
	d := defaultDeps(&out, &out)
	g := &globalOptions{}
	root := newRootCmd(d, g)
	root.AddCommand(&cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return nil }})
	root.SetArgs(append(args, "probe"))
	err := root.Execute()
	return g, err
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "zk2kafka.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPrecedence(t *testing.T) {
	file := writeConfig(t, "zk: file-zk:2181\nkafka: file-kafka:9092\nclient-id: file-client\nzk-session-timeout: 30s\nkafka-version: 3.9.0\n")
	cases := []struct {
		name        string
		args        []string
		env         map[string]string
		wantZK      string
		wantKafka   string
		wantClient  string
		wantTimeout time.Duration
		wantVersion string
	}{
		{name: "defaults only", wantClient: "zk2kafka", wantTimeout: 10 * time.Second, wantVersion: "auto"},
		{name: "file over defaults", args: []string{"--config", file},
			wantZK: "file-zk:2181", wantKafka: "file-kafka:9092", wantClient: "file-client", wantTimeout: 30 * time.Second, wantVersion: "3.9.0"},
		{name: "env over file", args: []string{"--config", file},
			env:    map[string]string{"ZK2KAFKA_KAFKA": "env-kafka:9092", "ZK2KAFKA_ZK_SESSION_TIMEOUT": "20s"},
			wantZK: "file-zk:2181", wantKafka: "env-kafka:9092", wantClient: "file-client", wantTimeout: 20 * time.Second, wantVersion: "3.9.0"},
		{name: "flag over env over file", args: []string{"--config", file, "--kafka", "flag-kafka:9092", "--client-id", "flag-client"},
			env:    map[string]string{"ZK2KAFKA_KAFKA": "env-kafka:9092", "ZK2KAFKA_CLIENT_ID": "env-client", "ZK2KAFKA_ZK": "env-zk:2181"},
			wantZK: "env-zk:2181", wantKafka: "flag-kafka:9092", wantClient: "flag-client", wantTimeout: 30 * time.Second, wantVersion: "3.9.0"},
		{name: "config file named by env", env: map[string]string{"ZK2KAFKA_CONFIG": file},
			wantZK: "file-zk:2181", wantKafka: "file-kafka:9092", wantClient: "file-client", wantTimeout: 30 * time.Second, wantVersion: "3.9.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := runProbe(t, tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if g.zkServers != tc.wantZK || g.kafkaBootstrap != tc.wantKafka || g.clientID != tc.wantClient ||
				g.zkSessionTimeout != tc.wantTimeout || g.kafkaVersion != tc.wantVersion {
				t.Errorf("got zk=%q kafka=%q client=%q timeout=%s version=%q; want zk=%q kafka=%q client=%q timeout=%s version=%q",
					g.zkServers, g.kafkaBootstrap, g.clientID, g.zkSessionTimeout, g.kafkaVersion,
					tc.wantZK, tc.wantKafka, tc.wantClient, tc.wantTimeout, tc.wantVersion)
			}
		})
	}
}

func TestConfigRejectsBadInput(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{name: "unknown key in file", file: "kafak: x:9092\n", wantErr: "unknown key(s) kafak"},
		{name: "not yaml", file: "zk: [unclosed\n", wantErr: "config file"},
		{name: "missing file", args: []string{"--config", "/nonexistent/zk2kafka.yaml"}, wantErr: "config file /nonexistent/zk2kafka.yaml"},
		{name: "bad duration in env", env: map[string]string{"ZK2KAFKA_ZK_SESSION_TIMEOUT": "soon"}, wantErr: "ZK2KAFKA_ZK_SESSION_TIMEOUT"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErr: "--log-level"},
		{name: "bad log format", args: []string{"--log-format", "xml"}, wantErr: `--log-format: "xml" is not one of text, json`},
		{name: "bad zk auth scheme", args: []string{"--zk-auth", "sasl:u:p"}, wantErr: "digest:user:password"},
		{name: "execute from a file", file: "execute: true\n", wantErr: `"execute" is taken only from the command line`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeConfig(t, tc.file)}, args...)
			}
			_, err := runProbe(t, args, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestLogFormatJSON: with --log-format json (or from the environment) every log line is one JSON
// object, for log shippers.
func TestLogFormatJSON(t *testing.T) {
	t.Setenv("ZK2KAFKA_LOG_FORMAT", "json")
	var out, errb bytes.Buffer
	d := defaultDeps(&out, &errb)
	root := newRootCmd(d, &globalOptions{})
	probe := &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error {
		d.logger.Info("hello", "group", "g")
		d.logger.Warn("careful")
		return nil
	}}
	root.AddCommand(probe)
	root.SetArgs([]string{"probe"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), errb.String())
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil || rec["level"] == nil {
			t.Errorf("log line %q is not a JSON record with msg and level: %v", l, err)
		}
	}
}

// A dry run must never become a write through the environment: --execute and the other
// safety overrides come only from the command line.
func TestSafetyFlagsIgnoreEnvironment(t *testing.T) {
	for _, name := range []string{"execute", "force", "replan", "mark"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("ZK2KAFKA_"+strings.ToUpper(name), "true")
			var out bytes.Buffer
			root := newRootCmd(defaultDeps(&out, &out), &globalOptions{})
			var set bool
			probe := &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return nil }}
			probe.Flags().BoolVar(&set, name, false, "")
			root.AddCommand(probe)
			root.SetArgs([]string{"probe"})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if set {
				t.Fatalf("ZK2KAFKA_%s=true set --%s", strings.ToUpper(name), name)
			}
		})
	}
}

// TestArchiveOffsetAdjustIgnoresEnvironment: a migration's shared ZK2KAFKA_OFFSET_ADJUST reaches
// plan, copy and verify, but export and restore take --offset-adjust from their command line
// alone (it would shift an export of Kafka, or refuse the undo of a copy).
func TestArchiveOffsetAdjustIgnoresEnvironment(t *testing.T) {
	t.Setenv("ZK2KAFKA_OFFSET_ADJUST", "1")
	tests := []struct {
		verb  []string
		typed bool // the flag on the command line
		want  int64
	}{
		{[]string{"export"}, false, 0},
		{[]string{"restore"}, false, 0},
		{[]string{"export"}, true, 2},
		{[]string{"migrate", "plan"}, false, 1},
		{[]string{"migrate", "verify"}, false, 1},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.verb, " "), func(t *testing.T) {
			var out bytes.Buffer
			root := newRootCmd(defaultDeps(&out, &out), &globalOptions{})
			c, _, err := root.Find(tt.verb)
			if err != nil {
				t.Fatal(err)
			}
			if tt.typed {
				if err := c.Flags().Set("offset-adjust", "2"); err != nil {
					t.Fatal(err)
				}
			}
			if err := applyConfig(c, ""); err != nil {
				t.Fatal(err)
			}
			if got := c.Flags().Lookup("offset-adjust").Value.String(); got != strconv.FormatInt(tt.want, 10) {
				t.Errorf("--offset-adjust %s, want %d", got, tt.want)
			}
		})
	}
}

// TestRestoreGroupMapIgnoresEnvironment: a shared ZK2KAFKA_GROUP_MAP would make restore refuse
// the undo of a copy and every rollback; restore takes the map from its command line alone.
func TestRestoreGroupMapIgnoresEnvironment(t *testing.T) {
	t.Setenv("ZK2KAFKA_GROUP_MAP", "a=k")
	for _, verb := range [][]string{{"restore"}, {"migrate", "plan"}} {
		var out bytes.Buffer
		root := newRootCmd(defaultDeps(&out, &out), &globalOptions{})
		c, _, err := root.Find(verb)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyConfig(c, ""); err != nil {
			t.Fatal(err)
		}
		got := c.Flags().Lookup("group-map").Value.String()
		if want := map[bool]string{true: "[]", false: "[a=k]"}[verb[0] == "restore"]; got != want {
			t.Errorf("%v: --group-map %s, want %s", verb, got, want)
		}
	}
}

// A password sent in clear text (SASL PLAIN without TLS) is warned of, naming the flag that
// fixes it, for the source and the target alike; nothing else is.
func TestWarnClearPassword(t *testing.T) {
	cases := []struct {
		sec    kafkaconn.Security
		prefix string
		want   string
	}{
		{kafkaconn.Security{Mechanism: kafkaconn.MechanismPlain}, "", "add --kafka-tls"},
		{kafkaconn.Security{Mechanism: kafkaconn.MechanismPlain}, targetPrefix, "the target kafka SASL PLAIN without TLS sends the password in clear text: add --target-kafka-tls"},
		{kafkaconn.Security{Mechanism: kafkaconn.MechanismPlain, TLS: true}, targetPrefix, ""},
		{kafkaconn.Security{Mechanism: kafkaconn.MechanismSCRAMSHA512}, "", ""},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		warnClearPassword(slog.New(slog.NewTextHandler(&buf, nil)), c.sec, c.prefix)
		if got := buf.String(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v %q: logged %q, want %q", c.sec, c.prefix, got, c.want)
		}
	}
}
