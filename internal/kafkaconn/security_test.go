package kafkaconn

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// pemFiles writes a self-signed certificate and its key as PEM files into a temp folder.
func pemFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	write(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	return certFile, keyFile
}

func write(t *testing.T, file string, b []byte) {
	t.Helper()
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSecurityValidate(t *testing.T) {
	cert, key := pemFiles(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	write(t, notPEM, []byte("hello"))
	missing := filepath.Join(t.TempDir(), "nope.pem")
	scram := func(m string) Security { return Security{Mechanism: m, User: "u", Password: "p"} }
	tests := []struct {
		name    string
		s       Security
		wantErr string
	}{
		{"plaintext", Security{}, ""},
		{"tls, system roots", Security{TLS: true}, ""},
		{"tls with CA and client pair", Security{TLS: true, CAFile: cert, CertFile: cert, KeyFile: key, ServerName: "b1"}, ""},
		{"each mechanism: PLAIN", scram(MechanismPlain), ""},
		{"each mechanism: SCRAM-SHA-256", scram(MechanismSCRAMSHA256), ""},
		{"each mechanism: SCRAM-SHA-512", scram(MechanismSCRAMSHA512), ""},
		{"missing CA file", Security{TLS: true, CAFile: missing}, "kafka TLS CA file: open " + missing},
		{"CA file without a certificate", Security{TLS: true, CAFile: notPEM}, "no PEM certificate"},
		{"key without cert", Security{TLS: true, KeyFile: key}, "client key " + key + ": no certificate file"},
		{"cert without key", Security{TLS: true, CertFile: cert}, "client certificate " + cert + ": no key file"},
		{"key that is not a key", Security{TLS: true, CertFile: cert, KeyFile: cert}, "client certificate " + cert + " and key " + cert},
		{"CA file without TLS", Security{CAFile: cert}, "a CA file is given but TLS is not enabled"},
		{"insecure without TLS", Security{InsecureSkipVerify: true}, "insecure-skip-verify is given but TLS is not enabled"},
		{"unknown mechanism", scram("NTLM"), `mechanism "NTLM": expected one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI, OAUTHBEARER`},
		{"no user", Security{Mechanism: MechanismPlain, Password: "p"}, "PLAIN: no user"},
		{"no password", Security{Mechanism: MechanismSCRAMSHA512, User: "u"}, `SCRAM-SHA-512 as user "u": no password`},
		{"user without mechanism", Security{User: "u"}, "no mechanism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Config{Bootstrap: []string{"h:1"}, Security: tt.s}.WithDefaults().Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestSecretNeverShown formats, logs and encodes a configuration every way the code or an
// operator's debugging could, and looks for the password.
func TestSecretNeverShown(t *testing.T) {
	const pw = "s3cr3t-Pa55word"
	cfg := Config{Bootstrap: []string{"h:1"}, Security: Security{TLS: true, Mechanism: MechanismSCRAMSHA256, User: "u", Password: pw}}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", cfg, "sec", cfg.Security, "pw", cfg.Security.Password)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "sec", cfg.Security, "pw", cfg.Security.Password)
	js, err := json.Marshal(cfg.Security)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg.Security),
		"%s": fmt.Sprintf("%s", cfg.Security.Password), "json": string(js), "slog": logs.String(),
		"describe": cfg.Security.Describe(),
	}
	for how, s := range shown {
		if strings.Contains(s, pw) {
			t.Errorf("%s shows the password: %s", how, s)
		}
	}
	if !strings.Contains(shown["%+v"], "[redacted]") {
		t.Errorf("%%+v does not even mark the password as redacted: %s", shown["%+v"])
	}
	if cfg.Security.Password.Reveal() != pw {
		t.Error("Reveal lost the password")
	}
}

func TestSecurityApply(t *testing.T) {
	cert, _ := pemFiles(t)
	tests := []struct {
		s         Security
		tls, sasl bool
		scram     bool
	}{
		{s: Security{}},
		{s: Security{TLS: true, CAFile: cert, ServerName: "b1"}, tls: true},
		{s: Security{Mechanism: MechanismPlain, User: "u", Password: "p"}, sasl: true},
		{s: Security{TLS: true, Mechanism: MechanismSCRAMSHA512, User: "u", Password: "p"}, tls: true, sasl: true, scram: true},
	}
	for _, tt := range tests {
		t.Run(tt.s.Describe(), func(t *testing.T) {
			conf := sarama.NewConfig()
			if err := tt.s.Apply(conf); err != nil {
				t.Fatal(err)
			}
			if conf.Net.TLS.Enable != tt.tls || conf.Net.SASL.Enable != tt.sasl || (conf.Net.SASL.SCRAMClientGeneratorFunc != nil) != tt.scram {
				t.Fatalf("tls %v sasl %v scram %v, want %v %v %v", conf.Net.TLS.Enable, conf.Net.SASL.Enable,
					conf.Net.SASL.SCRAMClientGeneratorFunc != nil, tt.tls, tt.sasl, tt.scram)
			}
			if tt.s.CAFile != "" && (conf.Net.TLS.Config.RootCAs == nil || conf.Net.TLS.Config.ServerName != "b1") {
				t.Error("CA pool or server name not applied")
			}
			if tt.sasl && (conf.Net.SASL.User != "u" || conf.Net.SASL.Password != "p" || string(conf.Net.SASL.Mechanism) != tt.s.Mechanism) {
				t.Errorf("SASL settings not applied: %+v", conf.Net.SASL)
			}
			if err := conf.Validate(); err != nil {
				t.Errorf("sarama refuses the config: %v", err)
			}
		})
	}
}
