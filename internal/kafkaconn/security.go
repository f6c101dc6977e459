package kafkaconn

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/IBM/sarama"
	"github.com/zk2kafka/zk2kafka/internal/secret"
	"github.com/zk2kafka/zk2kafka/internal/tlsconf"
)

// SASL mechanisms Security accepts (the names Kafka's sasl.enabled.mechanisms uses).
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
	MechanismGSSAPI      = "GSSAPI"      // Kerberos (kerberos.go)
	MechanismOAuthBearer = "OAUTHBEARER" // OIDC client credentials (oauth.go)
)

// Mechanisms lists the accepted SASL mechanisms, for help texts and errors.
func Mechanisms() []string {
	return append(PasswordMechanisms(), MechanismGSSAPI, MechanismOAuthBearer)
}

// PasswordMechanisms are the mechanisms that log in with a user and a password.
func PasswordMechanisms() []string {
	return []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512}
}

// Secret is a password that never prints (package secret).
type Secret = secret.Secret

// Security configures TLS and SASL for every connection to the cluster. The zero value is
// plaintext without authentication.
type Security struct {
	// TLS turns on TLS. The other TLS fields are errors without it, so a half-written config
	// never silently falls back to plaintext.
	TLS bool
	// CAFile is a PEM bundle of the CAs that sign the brokers' certificates. Default: the
	// system's roots.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and key (mutual TLS), both or neither.
	CertFile, KeyFile string
	// ServerName is checked against the brokers' certificates instead of the host dialled.
	ServerName string
	// InsecureSkipVerify accepts any broker certificate: it protects nothing against a man in
	// the middle. Negotiate logs a warning on every use.
	InsecureSkipVerify bool
	// TrustStore and KeyStore are Java stores (JKS, PKCS12, PEM) in place of CAFile and
	// CertFile/KeyFile, from a client.properties file; KeyPassword unlocks a JKS key.
	TrustStore, KeyStore tlsconf.Store
	KeyPassword          Secret
	// NoHostnameCheck verifies the brokers' chain but not their names (an empty
	// ssl.endpoint.identification.algorithm).
	NoHostnameCheck bool
	// TLSMinVersion and TLSMaxVersion bound the TLS versions (ssl.enabled.protocols); 0: any
	// from TLS 1.2.
	TLSMinVersion, TLSMaxVersion uint16
	// Mechanism is "" (no SASL) or one of Mechanisms.
	Mechanism string
	// User and Password are the SASL credentials of the password mechanisms.
	User     string
	Password Secret
	// Kerberos is GSSAPI's login; OAuth is OAUTHBEARER's.
	Kerberos Kerberos
	OAuth    OAuth
}

// Enabled reports whether anything but plaintext is configured.
func (s Security) Enabled() bool { return s.TLS || s.Mechanism != "" }

// Describe is a one-line summary for logs and errors: protocol and mechanism, never a secret.
func (s Security) Describe() string {
	proto := "PLAINTEXT"
	switch {
	case s.TLS && s.Mechanism != "":
		proto = "SASL_SSL"
	case s.TLS:
		proto = "SSL"
	case s.Mechanism != "":
		proto = "SASL_PLAINTEXT"
	}
	switch s.Mechanism {
	case "":
	case MechanismGSSAPI:
		return fmt.Sprintf("%s GSSAPI principal %q", proto, s.Kerberos.Principal)
	case MechanismOAuthBearer:
		return fmt.Sprintf("%s OAUTHBEARER client %q", proto, s.OAuth.ClientID)
	default:
		return fmt.Sprintf("%s %s user %q", proto, s.Mechanism, s.User)
	}
	return proto
}

// Validate checks the settings and the files they name without any network call. Errors name
// the setting and the file, never the password.
func (s Security) Validate() error {
	_, err := s.tlsConfig()
	if err != nil {
		return err
	}
	return s.validateSASL()
}

func (s Security) validateSASL() error {
	if s.Mechanism == "" {
		if s.User != "" || s.Password != "" {
			return fmt.Errorf("kafka SASL: a user or password is given but no mechanism: choose one of %s",
				strings.Join(Mechanisms(), ", "))
		}
		return nil
	}
	switch s.Mechanism {
	case MechanismGSSAPI:
		return s.Kerberos.validate()
	case MechanismOAuthBearer:
		return s.OAuth.validate()
	}
	if !knownMechanism(s.Mechanism) {
		return fmt.Errorf("kafka SASL mechanism %q: expected one of %s", s.Mechanism, strings.Join(Mechanisms(), ", "))
	}
	if s.User == "" {
		return fmt.Errorf("kafka SASL %s: no user given", s.Mechanism)
	}
	if s.Password == "" {
		return fmt.Errorf("kafka SASL %s as user %q: no password given", s.Mechanism, s.User)
	}
	return nil
}

func knownMechanism(m string) bool {
	return slices.Contains(Mechanisms(), m)
}

// NormalizeMechanism upper-cases a mechanism name ("scram-sha-512" is SCRAM-SHA-512).
func NormalizeMechanism(m string) string { return strings.ToUpper(strings.TrimSpace(m)) }

// tlsConfig builds the TLS settings, reading the files; nil when TLS is off.
func (s Security) tlsConfig() (*tls.Config, error) {
	if !s.TLS {
		for name, set := range map[string]bool{
			"a CA file": s.CAFile != "", "a client certificate": s.CertFile != "", "a client key": s.KeyFile != "",
			"a server name": s.ServerName != "", "insecure-skip-verify": s.InsecureSkipVerify,
			"a trust store": s.TrustStore.Path != "", "a key store": s.KeyStore.Path != "",
		} {
			if set {
				return nil, fmt.Errorf("kafka TLS: %s is given but TLS is not enabled (--kafka-tls)", name)
			}
		}
		return nil, nil
	}
	return tlsconf.Files{What: "kafka TLS", CAFile: s.CAFile, CertFile: s.CertFile, KeyFile: s.KeyFile,
		TrustStore: s.TrustStore, KeyStore: s.KeyStore, KeyPassword: s.KeyPassword,
		ServerName: s.ServerName, NoHostnameCheck: s.NoHostnameCheck, InsecureSkipVerify: s.InsecureSkipVerify,
		MinVersion: s.TLSMinVersion, MaxVersion: s.TLSMaxVersion}.Config()
}

// Apply sets conf's TLS and SASL from s (after Validate's checks). SaramaConfig calls it; the
// project's other sarama clients (the stack's readiness check, tests) use it to connect the
// same way.
func (s Security) Apply(conf *sarama.Config) error {
	tc, err := s.tlsConfig()
	if err != nil {
		return err
	}
	if err := s.validateSASL(); err != nil {
		return err
	}
	if tc != nil {
		conf.Net.TLS.Enable = true
		conf.Net.TLS.Config = tc
	}
	if s.Mechanism == "" {
		return nil
	}
	conf.Net.SASL.Enable = true
	conf.Net.SASL.Handshake = true
	// v1 wraps the exchange in SaslAuthenticate requests (Kafka 1.0+), so a failure comes
	// back as an error message from the broker rather than a closed connection.
	conf.Net.SASL.Version = sarama.SASLHandshakeV1
	conf.Net.SASL.Mechanism = sarama.SASLMechanism(s.Mechanism)
	switch s.Mechanism {
	case MechanismGSSAPI:
		return s.Kerberos.apply(conf)
	case MechanismOAuthBearer:
		return s.OAuth.apply(conf)
	}
	conf.Net.SASL.User = s.User
	conf.Net.SASL.Password = s.Password.Reveal()
	switch s.Mechanism {
	case MechanismSCRAMSHA256:
		conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(sha256.New) }
	case MechanismSCRAMSHA512:
		conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(sha512.New) }
	}
	return nil
}

// authError explains a failed connection when it is the broker refusing our credentials or
// our TLS settings refusing the broker, naming the broker and mechanism; ok is false for
// any other error.
func (s Security) authError(addr string, err error) (_ error, ok bool) {
	if s.Mechanism == MechanismGSSAPI {
		if kerr, ok := s.Kerberos.kerberosError(addr, err); ok {
			return kerr, true
		}
	}
	switch {
	case s.Mechanism == MechanismOAuthBearer && errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return fmt.Errorf("kafka broker %s refused the OAUTHBEARER token of client %q (expired, or not valid for this cluster: issuer, audience, signing key?): %w",
			addr, s.OAuth.ClientID, err), true
	case s.Mechanism == MechanismGSSAPI && errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return fmt.Errorf("kafka broker %s refused SASL GSSAPI authentication as %s: %w", addr, s.Describe(), err), true
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed), errors.Is(err, sarama.ErrIllegalSASLState):
		return fmt.Errorf("kafka broker %s refused SASL %s authentication as user %q (wrong user or password?): %w",
			addr, s.Mechanism, s.User, err), true
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism):
		return fmt.Errorf("kafka broker %s does not enable SASL mechanism %s: %w", addr, s.Mechanism, err), true
	}
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &invalid) || errors.As(err, &hostname) || errors.As(err, &verify) {
		return fmt.Errorf("kafka broker %s: TLS certificate not trusted (check the CA file and server name): %w", addr, err), true
	}
	// A TLS alert from the broker about certificates (bad_certificate, unknown_ca,
	// certificate_required) after our check of its certificate passed: it wants a client
	// certificate it trusts. crypto/tls reports alerts as a net.OpError "remote error" around an
	// unexported type, hence the text match.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "certificate") {
		return fmt.Errorf("kafka broker %s refused our TLS client certificate (none given, or not from a CA it trusts): %w", addr, err), true
	}
	if !s.TLS && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		// A TLS listener drops a plaintext client's first request without a word.
		return fmt.Errorf("%w (the broker closed the connection at once: if its listener is SSL or SASL_SSL, add --kafka-tls)", err), false
	}
	return err, false
}
