package zkreader

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// TLSError is a TLS handshake with a ZooKeeper server that failed: a certificate the CA does not
// sign, a name it does not carry, a plain port. Open gives it at once rather than after the
// session timeout: go-zookeeper would only log it and dial again.
type TLSError struct {
	Addr string
	Err  error
	Hint string
}

func (e *TLSError) Error() string {
	s := "TLS handshake with " + e.Addr + ": " + e.Err.Error()
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *TLSError) Unwrap() error { return e.Err }

// dialTLS dials addr and completes the TLS handshake within timeout. name is the host as the
// connect string gave it, which the certificate is checked against unless cfg names another
// (go-zookeeper hands the dialer resolved addresses).
func dialTLS(network, addr, name string, timeout time.Duration, cfg *tls.Config) (net.Conn, error) {
	raw, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = name
	}
	c := tls.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		_ = raw.Close() // the handshake failed: nothing to flush
		return nil, &TLSError{Addr: addr, Err: err, Hint: tlsHint(err)}
	}
	return c, nil
}

// tlsHint says which setting a handshake failure points at.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var name x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by a CA zk2kafka trusts: check --zk-tls-ca-file or zookeeper.ssl.truststore.location"
	case errors.As(err, &name):
		return "the server's certificate does not name the host dialled: connect by a name it carries, or set --zk-tls-server-name"
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return "the server closed the connection during the handshake: is this a plain (non-TLS) ZooKeeper port? " +
			"TLS needs its secureClientPort"
	case strings.Contains(err.Error(), "remote error"):
		return "the server refused the TLS session: does it require a client certificate (--zk-tls-cert-file and --zk-tls-key-file, or zookeeper.ssl.keystore.location)?"
	}
	return ""
}

// refusedByServer names a TLS session the server ended before the ZooKeeper handshake: with TLS
// 1.3 a missing or untrusted client certificate is refused only after the client's side of the
// handshake is done, so the refusal arrives on the first read.
func refusedByServer(addr string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "remote error: tls") {
		return nil
	}
	return &TLSError{Addr: addr, Err: err, Hint: "the server refused this client: does it require a client certificate from a CA it trusts " +
		"(--zk-tls-cert-file and --zk-tls-key-file, or zookeeper.ssl.keystore.location)?"}
}

// speaksTLS reports whether addr answers a TLS ClientHello with TLS records (a handshake or an
// alert): a secureClientPort given to a plain client.
func speaksTLS(addr string, timeout time.Duration) bool {
	raw, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return false
	}
	rec := &firstByte{Conn: raw}
	c := tls.Client(rec, &tls.Config{InsecureSkipVerify: true}) // a probe: nothing is sent over it
	defer c.Close()                                             // a probe: a failed close loses nothing
	_ = c.SetDeadline(time.Now().Add(timeout))
	_ = c.Handshake()
	return rec.seen && (rec.b == 0x16 || rec.b == 0x15) // handshake or alert record
}

// firstByte records the first byte read through a connection.
type firstByte struct {
	net.Conn
	b    byte
	seen bool
}

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	if n > 0 && !f.seen {
		f.b, f.seen = p[0], true
	}
	return n, err
}
