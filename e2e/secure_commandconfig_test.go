package e2e_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecureCommandConfig: the client.properties that Kafka's own consumer-groups tool takes
// (--command-config) works unchanged with zk2kafka: SCRAM-SHA-512 with a JKS trust store, and
// PLAIN with PKCS12 trust and key stores on the listener that requires a client certificate.
// zk2kafka copies with the file, the tool reads the commits back with the same file, and no
// password of it shows in zk2kafka's --debug output.
func TestSecureCommandConfig(t *testing.T) {
	e := newSecureEnv(t)
	cases := []struct{ name, props, bootstrap string }{
		{"SCRAM and JKS", e.st.ClientPropertiesJKS, e.st.Kafka},
		{"PLAIN and PKCS12, mutual TLS", e.st.ClientPropertiesP12, e.st.KafkaMTLS},
	}
	password := readSecret(t, e.st.PasswordFile)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = []string{"--command-config", c.props}
			topic := s.topic(10, 10)
			g := s.group()
			offsets := map[int32]int64{0: 4, 1: 9}
			s.zkOffsets(g, topic, offsets)
			cp := s.cliBootstrap(c.bootstrap, "--debug", "migrate", "copy", "--group", g, "--execute", "--backup", s.file("backup"))
			if cp.code != 0 {
				t.Fatalf("copy with --command-config %s: %s", c.props, cp)
			}
			verify := s.cliBootstrap(c.bootstrap, "migrate", "verify", "--group", g)
			if verify.code != 0 {
				t.Fatalf("verify: %s", verify)
			}
			assertHidden(t, password, cp, verify)
			if got, w := e.st.DescribeOffsetsWith(t, g, c.bootstrap, c.props), want(topic, offsets); !maps.Equal(got, w) {
				t.Errorf("consumer-groups --command-config %s --describe %s: %v, want %v", c.props, g, got, w)
			}
		})
	}
}

// TestSecureCommandConfigRefused: a key zk2kafka does not understand, a wrong store password and
// a flag beside the file are each refused before anything is written, naming the key, the
// store setting or the flag, never a password.
func TestSecureCommandConfigRefused(t *testing.T) {
	e := newSecureEnv(t)
	topic := e.topic(5)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2})
	orig, err := os.ReadFile(e.st.ClientPropertiesJKS)
	if err != nil {
		t.Fatal(err)
	}
	storePassword := strings.TrimSpace(strings.SplitN(strings.SplitN(string(orig), "ssl.truststore.password=", 2)[1], "\n", 2)[0])
	write := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.properties", string(orig)+"ssl.trustmanager.algorithm=PKIX\nrequest.timeout.ms=30000\n")
	wrongPW := write("wrongpw.properties", strings.ReplaceAll(string(orig), "ssl.truststore.password="+storePassword, "ssl.truststore.password=not-it"))
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown keys", []string{"--command-config", unknown}, []string{"ssl.trustmanager.algorithm", "request.timeout.ms", unknown}},
		{"wrong trust store password", []string{"--command-config", wrongPW}, []string{"ssl.truststore.location", "password"}},
		{"a flag beside the file", []string{"--command-config", e.st.ClientPropertiesJKS, "--kafka-tls"}, []string{"--kafka-tls and --command-config are exclusive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = c.args
			r := s.cli("migrate", "copy", "--execute", "--backup", s.file("backup"))
			s.checkRefused(r, g, c.want, storePassword)
		})
	}
}
