package e2e_test

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// TestSecureTLSTrust: a broker certificate from another CA is refused clearly; it is accepted
// only with --kafka-tls-insecure-skip-verify, which warns; a plaintext client gets a hint. On
// the listener that requires a client certificate (mutual TLS) ours passes; none, or one from
// another CA, is refused.
func TestSecureTLSTrust(t *testing.T) {
	e := newSecureEnv(t)
	good := func(extra ...string) []string {
		return append(e.userArgs(kafkaconn.MechanismSCRAMSHA512, e.st.PasswordFile), extra...)
	}
	mtls := func(extra ...string) []string { return good(append([]string{"--kafka", e.st.KafkaMTLS}, extra...)...) }
	otherCA := good()
	otherCA[2] = e.st.OtherCAFile // --kafka-tls-ca-file
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"wrong CA", otherCA, 1, "TLS certificate not trusted"},
		{"wrong CA, verification off", append(otherCA, "--kafka-tls-insecure-skip-verify"), 0, "VERIFICATION IS OFF"},
		{"server name in the certificate", good("--kafka-tls-server-name", "localhost"), 0, ""},
		{"server name not in the certificate", good("--kafka-tls-server-name", "kafka.example"), 1, "TLS certificate not trusted"},
		{"no TLS", []string{"--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", e.st.User,
			"--kafka-sasl-password-file", e.st.PasswordFile}, 1, "--kafka-tls"},
		{"mTLS, client certificate from the broker's CA", mtls("--kafka-tls-cert-file", e.st.ClientCertFile,
			"--kafka-tls-key-file", e.st.ClientKeyFile), 0, ""},
		{"mTLS, no client certificate", mtls(), 1, "refused our TLS client certificate"},
		{"mTLS, client certificate from another CA", mtls("--kafka-tls-cert-file", e.st.OtherClientCertFile,
			"--kafka-tls-key-file", e.st.OtherClientKeyFile), 1, "refused our TLS client certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = tt.args
			r := s.cli("migrate", "plan", "--allow-empty") // the connection is under test, on an empty chroot
			if r.code != tt.code || !strings.Contains(r.stderr, tt.inStderr) {
				t.Fatalf("want exit %d and %q in stderr, got %s", tt.code, tt.inStderr, r)
			}
		})
	}
}
