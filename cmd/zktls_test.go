package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestZKTLSFlagsRefused: ZooKeeper TLS settings that cannot all hold are refused before any
// connection, naming the flags (unopenable fails the test if a store is opened).
func TestZKTLSFlagsRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "zk-tls.properties")
	if err := os.WriteFile(file, []byte("zookeeper.ssl.client.enable=false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--zk-tls-ca-file", "ca.pem"}, "--zk-tls-ca-file is given but ZooKeeper TLS is not enabled (--zk-tls)"},
		{[]string{"--zk-tls", "--zk-tls-cert-file", "c.pem"}, "no key file given"},
		{[]string{"--zk-tls", "--zk-tls-ca-file", "/nonexistent/ca.pem"}, "zookeeper TLS CA file"},
		{[]string{"--zk-tls-config-file", file, "--zk-tls-server-name", "zk"}, "--zk-tls-server-name and --zk-tls-config-file are exclusive"},
		{[]string{"--zk-tls", "--zk-tls-config-file", file}, "turns TLS off"},
		{[]string{"--zk-tls-config-file", "/nonexistent.properties"}, "--zk-tls-config-file"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := runWith(t, unopenable{t}, nil, append([]string{"--zk", "zk:2181", "--kafka", "k:9092", "migrate", "plan"}, c.args...)...)
			if code != ExitError || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitError, c.want)
			}
		})
	}
	_, stderr, code := runWith(t, unopenable{t}, nil, "--zk-data-dir", "x", "--zk-tls", "--kafka", "k:9092", "migrate", "plan")
	if code != ExitError || !strings.Contains(stderr, "a data directory (--zk-data-dir) is read from disk") {
		t.Errorf("--zk-tls with --zk-data-dir: exit %d, stderr %q", code, stderr)
	}
}

// TestCommandConfigRefusals: --command-config is the one source of Kafka's security settings;
// a flag beside it, or a Kerberos setting for a file of another mechanism, is refused before
// any connection.
func TestCommandConfigRefusals(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client.properties")
	body := "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p-secret-1\";\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--kafka-sasl-user", "u"}, "--kafka-sasl-user and --command-config are exclusive"},
		{[]string{"--kafka-sasl-kerberos-config", "/etc/krb5.conf"}, `--kafka-sasl-kerberos-config is for GSSAPI`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := runWith(t, unopenable{t}, nil, append([]string{"--zk", "zk:2181", "--kafka", "k:9092", "--command-config", file, "migrate", "plan"}, c.args...)...)
			if code != ExitError || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "p-secret-1") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q, no password", code, stderr, ExitError, c.want)
			}
		})
	}
}
