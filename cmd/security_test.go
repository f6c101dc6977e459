package cmd

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

func TestKafkaSecurityConfig(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := writeConfig(t, "kafka-tls: true\nkafka-sasl-mechanism: scram-sha-512\nkafka-sasl-user: file-user\nkafka-sasl-password-file: "+pwFile+"\n")
	sasl := []string{"--kafka-sasl-mechanism", "PLAIN", "--kafka-sasl-user", "u"}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		want     kafkaconn.Security
		wantErr  string
		password string
	}{
		{name: "none", want: kafkaconn.Security{}},
		{name: "password from env", args: sasl, env: map[string]string{envSASLPassword: "from-env"},
			want: kafkaconn.Security{Mechanism: "PLAIN", User: "u"}, password: "from-env"},
		{name: "password from file, newline trimmed", args: append(sasl, "--kafka-sasl-password-file", pwFile),
			want: kafkaconn.Security{Mechanism: "PLAIN", User: "u"}, password: "from-file"},
		{name: "everything from the config file", args: []string{"--config", yaml},
			want: kafkaconn.Security{TLS: true, Mechanism: "SCRAM-SHA-512", User: "file-user"}, password: "from-file"},
		{name: "both env and file", args: append(sasl, "--kafka-sasl-password-file", pwFile),
			env: map[string]string{envSASLPassword: "x"}, wantErr: "give it one way"},
		{name: "empty password file", args: append(sasl, "--kafka-sasl-password-file", empty), wantErr: "is empty"},
		{name: "missing password file", args: append(sasl, "--kafka-sasl-password-file", filepath.Join(dir, "nope")),
			wantErr: "--kafka-sasl-password-file: open"},
		{name: "no password", args: sasl, wantErr: `SASL PLAIN as user "u": no password`},
		{name: "unknown mechanism", args: []string{"--kafka-sasl-mechanism", "NTLM", "--kafka-sasl-user", "u"},
			env: map[string]string{envSASLPassword: "x"}, wantErr: `mechanism "NTLM"`},
		{name: "CA file without --kafka-tls", args: []string{"--kafka-tls-ca-file", pwFile}, wantErr: "TLS is not enabled (--kafka-tls)"},
		{name: "password in the config file", args: []string{"--config", writeConfig(t, "kafka-sasl-password: hunter2\n")},
			wantErr: "kafka-sasl-password is never read from a file"},
		{name: "insecure-skip-verify in the config file", args: []string{"--config", writeConfig(t, "kafka-tls: true\nkafka-tls-insecure-skip-verify: true\n")},
			wantErr: "taken only from the command line"},
		{name: "insecure-skip-verify from env is ignored", env: map[string]string{"ZK2KAFKA_KAFKA_TLS": "true", "ZK2KAFKA_KAFKA_TLS_INSECURE_SKIP_VERIFY": "true"},
			want: kafkaconn.Security{TLS: true}},
		{name: "insecure-skip-verify on the command line", args: []string{"--kafka-tls", "--kafka-tls-insecure-skip-verify"},
			want: kafkaconn.Security{TLS: true, InsecureSkipVerify: true}},
		{name: "a stray password without SASL is ignored", env: map[string]string{envSASLPassword: "x"}, want: kafkaconn.Security{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := runProbe(t, tt.args, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "from-file") {
					t.Errorf("the error shows a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := g.kafkaSecurity
			if got.Password.Reveal() != tt.password {
				t.Errorf("password %q, want %q", got.Password.Reveal(), tt.password)
			}
			got.Password = ""
			if got != tt.want {
				t.Errorf("security %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPasswordNeverPrinted opens the real Kafka adapters (nothing listens on the port) with
// --debug and a SASL password in the environment, and looks for the password in every log line
// and error, and in --help.
func TestPasswordNeverPrinted(t *testing.T) {
	const pw = "pw-6b1e0c9d-do-not-print"
	t.Setenv(envSASLPassword, pw)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--help"}, {"migrate", "copy", "--help"}} {
		var out bytes.Buffer
		Execute(context.Background(), args, &out, &out)
		if !strings.Contains(out.String(), "--kafka-sasl-password-file") || strings.Contains(out.String(), pw) {
			t.Errorf("zk2kafka %s: want the flags listed and no password:\n%s", strings.Join(args, " "), out.String())
		}
	}

	var logs bytes.Buffer
	d := defaultDeps(&logs, &logs)
	g := &globalOptions{}
	root := newRootCmd(d, g)
	root.SetArgs([]string{"--kafka", closed, "--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-user", "u", "--debug", "version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _, kerr := realStores{}.OpenKafka(ctx, g, d)
	_, _, verr := openViaTopic(ctx, g, d)
	for _, err := range []error{kerr, verr} {
		if err == nil || !strings.Contains(err.Error(), closed) {
			t.Fatalf("open kafka at %s: %v, want an error naming it", closed, err)
		}
	}
	all := logs.String() + kerr.Error() + verr.Error()
	if !strings.Contains(kerr.Error(), "SCRAM-SHA-256") || !strings.Contains(logs.String(), "level=DEBUG") {
		t.Errorf("want an error naming the mechanism and debug logs (else this test proves nothing):\n%s", all)
	}
	if strings.Contains(all, pw) {
		t.Errorf("the password is printed:\n%s", all)
	}
}

// TestExampleSecureConfig loads configs/sasl-tls.yaml: every key must be a known flag, and the
// run must stop at the first file it names (absent here) before any connection.
func TestExampleSecureConfig(t *testing.T) {
	_, err := runProbe(t, []string{"--config", filepath.Join("..", "configs", "sasl-tls.yaml")}, nil)
	if err == nil || !strings.Contains(err.Error(), "--kafka-sasl-password-file: open /etc/zk2kafka/kafka.password") {
		t.Fatalf("err = %v, want the missing password file named", err)
	}
}
