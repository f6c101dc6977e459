package clientprops

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeProps(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "zk-tls.properties")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestZooKeeperTLS: Kafka's and ZooKeeper's own names are read, what zk2kafka cannot honour is
// refused naming the key, and no error shows a password.
func TestZooKeeperTLS(t *testing.T) {
	const pw = "zk-store-password-1"
	cases := []struct {
		name    string
		body    string
		wantErr string // "" for success
		check   func(*testing.T, *tls.Config)
	}{
		{name: "TLS off", body: "zookeeper.ssl.client.enable=false\n",
			check: func(t *testing.T, c *tls.Config) {
				if c != nil {
					t.Error("TLS on")
				}
			}},
		{name: "on, system roots, TLS 1.3 only", body: "zookeeper.ssl.client.enable=true\nzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\nzookeeper.ssl.enabled.protocols=TLSv1.3\n",
			check: func(t *testing.T, c *tls.Config) {
				if c == nil || c.MinVersion != tls.VersionTLS13 || c.RootCAs != nil {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "ZooKeeper's own names", body: "zookeeper.client.secure=true\nzookeeper.ssl.hostnameVerification=false\n",
			check: func(t *testing.T, c *tls.Config) {
				if c == nil || c.VerifyConnection == nil {
					t.Error("hostnameVerification=false did not turn to a chain-only check")
				}
			}},
		{name: "unknown key", body: "zookeeper.ssl.client.enable=true\nzookeeper.ssl.keystore.passwrd=" + pw + "\n", wantErr: "zookeeper.ssl.keystore.passwrd"},
		{name: "stores but TLS off", body: "zookeeper.ssl.truststore.location=/x.jks\nzookeeper.ssl.truststore.password=" + pw + "\n", wantErr: "zookeeper.ssl.client.enable is not true"},
		{name: "revocation", body: "zookeeper.ssl.client.enable=true\nzookeeper.ssl.ocsp.enable=true\n", wantErr: "zookeeper.ssl.ocsp.enable"},
		{name: "bad boolean", body: "zookeeper.ssl.client.enable=yes please\n", wantErr: "zookeeper.ssl.client.enable"},
		{name: "missing store", body: "zookeeper.ssl.client.enable=true\nzookeeper.ssl.truststore.location=/nonexistent.jks\nzookeeper.ssl.truststore.password=" + pw + "\n",
			wantErr: "zookeeper.ssl.truststore.location"},
		{name: "old protocol", body: "zookeeper.ssl.client.enable=true\nzookeeper.ssl.enabled.protocols=TLSv1.1\n", wantErr: "TLSv1.1"},
		{name: "unknown cipher", body: "zookeeper.ssl.client.enable=true\nzookeeper.ssl.cipher.suites=TLS_FOO\n", wantErr: "TLS_FOO"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ZooKeeperTLS(writeProps(t, c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			case err != nil && strings.Contains(err.Error(), pw):
				t.Fatalf("the error shows the password: %v", err)
			case c.check != nil:
				c.check(t, got)
			}
		})
	}
}
