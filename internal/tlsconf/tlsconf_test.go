package tlsconf

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/zk2kafka/zk2kafka/internal/secret"
)

type issued struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func issue(t *testing.T, cn string, parent *issued, dns ...string) *issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: dns,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	signer, signKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	} else {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &issued{cert: c, key: key}
}

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pemOf(i *issued, withKey bool) []byte {
	var b bytes.Buffer
	if withKey {
		der, _ := x509.MarshalPKCS8PrivateKey(i.key)
		_ = pem.Encode(&b, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: i.cert.Raw})
	return b.Bytes()
}

// stores writes the CA as a trust store and the client as a key store in each type.
func stores(t *testing.T, ca, client *issued, pw string) map[string][2]Store {
	t.Helper()
	out := map[string][2]Store{}
	// JKS
	ts := keystore.New()
	if err := ts.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(),
		Certificate: keystore.Certificate{Type: "X509", Content: ca.cert.Raw}}); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := ts.Store(&tb, []byte(pw)); err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	der, _ := x509.MarshalPKCS8PrivateKey(client.key)
	if err := ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: client.cert.Raw}, {Type: "X509", Content: ca.cert.Raw}}}, []byte(pw)); err != nil {
		t.Fatal(err)
	}
	var kb bytes.Buffer
	if err := ks.Store(&kb, []byte(pw)); err != nil {
		t.Fatal(err)
	}
	out[TypeJKS] = [2]Store{{Setting: "t", Path: write(t, "t.jks", tb.Bytes()), Type: "jks", Password: secret.Secret(pw)},
		{Setting: "k", Path: write(t, "k.jks", kb.Bytes()), Type: "JKS", Password: secret.Secret(pw)}}
	// PKCS12
	p12t, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, pw)
	if err != nil {
		t.Fatal(err)
	}
	p12k, err := pkcs12.Modern.Encode(client.key, client.cert, []*x509.Certificate{ca.cert}, pw)
	if err != nil {
		t.Fatal(err)
	}
	out[TypePKCS12] = [2]Store{{Setting: "t", Path: write(t, "t.p12", p12t), Type: "PKCS12", Password: secret.Secret(pw)},
		{Setting: "k", Path: write(t, "k.p12", p12k), Type: "pkcs12", Password: secret.Secret(pw)}}
	// PEM
	out[TypePEM] = [2]Store{{Setting: "t", Path: write(t, "t.pem", pemOf(ca, false)), Type: "PEM"},
		{Setting: "k", Path: write(t, "k.pem", pemOf(client, true)), Type: "PEM"}}
	return out
}

// serve is a TLS server that requires a client certificate from ca, named by dns.
func serve(t *testing.T, ca, server *issued) string {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		Certificates: []tls.Certificate{{Certificate: [][]byte{server.cert.Raw}, PrivateKey: server.key}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); _ = c.Close() }()
		}
	}()
	return l.Addr().String()
}

func handshake(cfg *tls.Config, addr, name string) error {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = name
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	// TLS 1.3 reports a refused client certificate on the first read.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	if err != nil && strings.Contains(err.Error(), "EOF") {
		return nil
	}
	return err
}

// TestStores: each store type gives a config that completes a mutual-TLS handshake with a
// real server; a wrong password, a wrong CA, a wrong name and a missing client certificate
// each fail, naming the setting and never the password.
func TestStores(t *testing.T) {
	ca := issue(t, "ca", nil)
	other := issue(t, "other ca", nil)
	client := issue(t, "client", ca)
	server := issue(t, "server", ca, "zk.example")
	addr := serve(t, ca, server)
	const pw = "s3cret-password"
	for typ, s := range stores(t, ca, client, pw) {
		t.Run(typ, func(t *testing.T) {
			cfg, err := Files{What: "test TLS", TrustStore: s[0], KeyStore: s[1]}.Config()
			if err != nil {
				t.Fatal(err)
			}
			if err := handshake(cfg, addr, "zk.example"); err != nil {
				t.Errorf("handshake with the right stores: %v", err)
			}
			if err := handshake(cfg, addr, "other.example"); err == nil {
				t.Error("a wrong server name was accepted")
			}
			cfg, err = Files{What: "test TLS", TrustStore: s[0], KeyStore: s[1], NoHostnameCheck: true}.Config()
			if err != nil {
				t.Fatal(err)
			}
			if err := handshake(cfg, addr, "other.example"); err != nil {
				t.Errorf("NoHostnameCheck: %v", err)
			}
			noCert, _ := Files{What: "test TLS", TrustStore: s[0]}.Config()
			if err := handshake(noCert, addr, "zk.example"); err == nil {
				t.Error("a handshake without a client certificate succeeded")
			}
			if typ == TypePEM {
				return
			}
			for i, st := range s {
				st.Password = "wrong-password"
				f := Files{What: "test TLS", TrustStore: s[0], KeyStore: s[1]}
				if i == 0 {
					f.TrustStore = st
				} else {
					f.KeyStore = st
				}
				_, err := f.Config()
				if err == nil || !strings.Contains(err.Error(), st.Setting) || strings.Contains(err.Error(), pw) {
					t.Errorf("%s with a wrong password: err = %v, want one naming %q without the password", st.Setting, err, st.Setting)
				}
			}
		})
	}
	wrongCA, err := Files{What: "test TLS", CAFile: write(t, "other.pem", pemOf(other, false))}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(wrongCA, addr, "zk.example"); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("wrong CA: err = %v, want an unknown authority", err)
	}
}

// TestFilesRefused: contradictory or incomplete settings are errors before any connection.
func TestFilesRefused(t *testing.T) {
	cases := []struct {
		name string
		f    Files
		want string
	}{
		{"CA file and trust store", Files{CAFile: "a", TrustStore: Store{Setting: "ssl.truststore.location", Path: "b"}}, "choose one"},
		{"cert without key", Files{CertFile: "c"}, "no key file"},
		{"unknown type", Files{TrustStore: Store{Setting: "s", Path: "tlsconf.go", Type: "BKS"}}, `"BKS" is not one of`},
		{"missing store", Files{KeyStore: Store{Setting: "ssl.keystore.location", Path: "/nonexistent"}}, "ssl.keystore.location"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.f.What = "test TLS"
			if _, err := c.f.Config(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}
