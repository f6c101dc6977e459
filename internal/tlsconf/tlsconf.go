// Package tlsconf turns TLS settings given as files into a *tls.Config, for Kafka and for
// ZooKeeper alike: PEM files as zk2kafka's own flags take them, and the Java key and trust
// stores (JKS, PKCS12, PEM) that Kafka's client.properties and zookeeper.ssl.* settings name.
//
// Reads: the files named. Writes: nothing. Passwords are secret.Secret: errors name the
// setting and the file, never a password.
package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/zk2kafka/zk2kafka/internal/secret"
)

// Store types, as Kafka's ssl.*store.type and ZooKeeper's ssl.*Store.type name them.
const (
	TypeJKS    = "JKS"
	TypePKCS12 = "PKCS12"
	TypePEM    = "PEM"
)

// Store is a Java key or trust store file.
type Store struct {
	// Setting names the store in errors, e.g. "ssl.truststore.location".
	Setting  string
	Path     string
	Type     string // JKS, PKCS12 or PEM; "" is JKS, Java's default
	Password secret.Secret
}

// Files are the TLS settings of one connection. PEM files (CAFile, CertFile, KeyFile) and
// stores (TrustStore, KeyStore) are alternatives for the same thing; both at once is an error.
type Files struct {
	// What names the connection in errors: "kafka TLS", "zookeeper TLS".
	What string
	// CAFile is a PEM bundle of the CAs to trust. Default: the system's roots.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key (mutual TLS).
	CertFile, KeyFile string
	// TrustStore holds the CAs to trust; KeyStore the client key and certificate chain.
	TrustStore, KeyStore Store
	// KeyPassword unlocks the key inside a JKS KeyStore (Kafka's ssl.key.password); default
	// the store's password.
	KeyPassword secret.Secret
	// ServerName is checked against the server's certificate instead of the host dialled.
	ServerName string
	// NoHostnameCheck verifies the chain but not the name in it (Kafka's empty
	// ssl.endpoint.identification.algorithm, ZooKeeper's hostnameVerification=false).
	NoHostnameCheck bool
	// InsecureSkipVerify accepts any certificate: it protects nothing against a man in the
	// middle.
	InsecureSkipVerify bool
	// MinVersion and MaxVersion bound the TLS versions (0: TLS 1.2, and the newest).
	MinVersion, MaxVersion uint16
}

// Config reads the files and builds the TLS settings.
func (f Files) Config() (*tls.Config, error) {
	c := &tls.Config{MinVersion: max(tls.VersionTLS12, f.MinVersion), MaxVersion: f.MaxVersion, ServerName: f.ServerName,
		InsecureSkipVerify: f.InsecureSkipVerify}
	roots, err := f.roots()
	if err != nil {
		return nil, err
	}
	c.RootCAs = roots
	pair, err := f.clientCert()
	if err != nil {
		return nil, err
	}
	if pair != nil {
		c.Certificates = []tls.Certificate{*pair}
	}
	if f.NoHostnameCheck && !f.InsecureSkipVerify {
		// crypto/tls checks the chain and the name together: skip both, then check the chain.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, roots) }
	}
	return c, nil
}

func (f Files) roots() (*x509.CertPool, error) {
	switch {
	case f.CAFile != "" && f.TrustStore.Path != "":
		return nil, fmt.Errorf("%s: a CA file (%s) and a trust store (%s %s) are both given: choose one", f.What, f.CAFile, f.TrustStore.Setting, f.TrustStore.Path)
	case f.CAFile != "":
		return pemPool(f.What+" CA file", f.CAFile)
	case f.TrustStore.Path != "":
		certs, err := f.TrustStore.trusted(f.What)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		for _, c := range certs {
			pool.AddCert(c)
		}
		return pool, nil
	}
	return nil, nil // the system's roots
}

func pemPool(what, file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", what, file)
	}
	return pool, nil
}

func (f Files) clientCert() (*tls.Certificate, error) {
	switch {
	case (f.CertFile != "" || f.KeyFile != "") && f.KeyStore.Path != "":
		return nil, fmt.Errorf("%s: a client certificate file and a key store (%s %s) are both given: choose one", f.What, f.KeyStore.Setting, f.KeyStore.Path)
	case f.CertFile != "" && f.KeyFile == "":
		return nil, fmt.Errorf("%s client certificate %s: no key file given", f.What, f.CertFile)
	case f.KeyFile != "" && f.CertFile == "":
		return nil, fmt.Errorf("%s client key %s: no certificate file given", f.What, f.KeyFile)
	case f.CertFile != "":
		pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			// LoadX509KeyPair's messages name neither file: say which pair it was.
			return nil, fmt.Errorf("%s client certificate %s and key %s: %w", f.What, f.CertFile, f.KeyFile, err)
		}
		return &pair, nil
	case f.KeyStore.Path != "":
		return f.KeyStore.keyPair(f.What, f.KeyPassword)
	}
	return nil, nil
}

// where names the store in errors: the setting, its type and the file.
func (s Store) where(what string) string {
	return fmt.Sprintf("%s %s (%s, type %s)", what, s.Setting, s.Path, s.typ())
}

func (s Store) typ() string {
	if s.Type == "" {
		return TypeJKS
	}
	return strings.ToUpper(s.Type)
}

func (s Store) read(what string) ([]byte, error) {
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, s.Setting, err)
	}
	switch s.typ() {
	case TypeJKS, TypePKCS12, TypePEM:
		return b, nil
	}
	return nil, fmt.Errorf("%s: the type %q is not one of JKS, PKCS12, PEM", s.where(what), s.Type)
}

// trusted is every certificate a trust store holds.
func (s Store) trusted(what string) ([]*x509.Certificate, error) {
	b, err := s.read(what)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch s.typ() {
	case TypePEM:
		certs, err = pemCerts(b)
	case TypePKCS12:
		certs, err = pkcs12.DecodeTrustStore(b, s.Password.Reveal())
	case TypeJKS:
		var ks keystore.KeyStore
		if ks, err = loadJKS(b, s.Password); err == nil {
			for _, a := range ks.Aliases() {
				var chain []keystore.Certificate
				if e, terr := ks.GetTrustedCertificateEntry(a); terr == nil {
					chain = []keystore.Certificate{e.Certificate}
				} else if chain, terr = ks.GetPrivateKeyEntryCertificateChain(a); terr != nil {
					continue
				}
				for _, c := range chain {
					x, perr := x509.ParseCertificate(c.Content)
					if perr != nil {
						return nil, fmt.Errorf("%s: alias %q: %w", s.where(what), a, perr)
					}
					certs = append(certs, x)
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.where(what), storeError(err))
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s: no certificate in it", s.where(what))
	}
	return certs, nil
}

// keyPair is the client key and its certificate chain from a key store.
func (s Store) keyPair(what string, keyPassword secret.Secret) (*tls.Certificate, error) {
	b, err := s.read(what)
	if err != nil {
		return nil, err
	}
	var (
		key   crypto.PrivateKey
		chain [][]byte
	)
	switch s.typ() {
	case TypePEM:
		if keyPassword != "" {
			return nil, fmt.Errorf("%s: an encrypted PEM key (ssl.key.password) is not supported: store the key unencrypted (PKCS#8) or use a PKCS12 key store", s.where(what))
		}
		pair, perr := tls.X509KeyPair(b, b)
		if perr != nil {
			return nil, fmt.Errorf("%s: %w", s.where(what), perr)
		}
		return &pair, nil
	case TypePKCS12:
		var leaf *x509.Certificate
		var cas []*x509.Certificate
		if key, leaf, cas, err = pkcs12.DecodeChain(b, s.Password.Reveal()); err == nil {
			chain = append(chain, leaf.Raw)
			for _, c := range cas {
				chain = append(chain, c.Raw)
			}
		}
	case TypeJKS:
		key, chain, err = jksKey(b, s.Password, keyPassword)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.where(what), storeError(err))
	}
	pair := &tls.Certificate{Certificate: chain, PrivateKey: key}
	if pair.Leaf, err = x509.ParseCertificate(chain[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", s.where(what), err)
	}
	return pair, nil
}

func loadJKS(b []byte, password secret.Secret) (keystore.KeyStore, error) {
	ks := keystore.New()
	err := ks.Load(bytes.NewReader(b), []byte(password.Reveal()))
	return ks, err
}

// jksKey is the one private key entry of a JKS key store.
func jksKey(b []byte, storePassword, keyPassword secret.Secret) (crypto.PrivateKey, [][]byte, error) {
	ks, err := loadJKS(b, storePassword)
	if err != nil {
		return nil, nil, err
	}
	if keyPassword == "" {
		keyPassword = storePassword
	}
	var aliases []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			aliases = append(aliases, a)
		}
	}
	if len(aliases) != 1 {
		return nil, nil, fmt.Errorf("%d private key entries (aliases %q): expected exactly one", len(aliases), aliases)
	}
	e, err := ks.GetPrivateKeyEntry(aliases[0], []byte(keyPassword.Reveal()))
	if err != nil {
		return nil, nil, fmt.Errorf("alias %q: %w (ssl.key.password)", aliases[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("alias %q: %w", aliases[0], err)
	}
	chain := make([][]byte, len(e.CertificateChain))
	for i, c := range e.CertificateChain {
		chain[i] = c.Content
	}
	if len(chain) == 0 {
		return nil, nil, fmt.Errorf("alias %q: no certificate chain", aliases[0])
	}
	return key, chain, nil
}

func pemCerts(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return certs, nil
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
}

// storeError says what a wrong password looks like: both libraries report it as an integrity
// or digest failure.
func storeError(err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || strings.Contains(err.Error(), "digest") {
		return fmt.Errorf("wrong password, or the file is damaged: %w", err)
	}
	return err
}

// verifyChain checks the server's chain against roots, without its name.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}
