package zkreader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NotZooKeeperError names a server that accepted the connection but did not answer as ZooKeeper:
// a Kafka broker given as --zk, or any other service.
type NotZooKeeperError struct {
	Addr string // host:port as dialled
	Hint string // what it looks like instead: "is it a Kafka broker?", or the bytes it sent
}

func (e *NotZooKeeperError) Error() string {
	return e.Addr + " does not answer as ZooKeeper: " + e.Hint
}

// openCheck follows, while Open waits for its sessions, what each server address did, so that
// Open fails at once when none of them can give a session: every one refused the connection, or
// answered but not as ZooKeeper. go-zookeeper only logs such failures and tries the servers again
// and again, which kept Open waiting the whole session timeout before it said anything.
type openCheck struct {
	// addrs are the addresses go-zookeeper dials: each server resolved as its DNSHostProvider does;
	// names maps each back to the host the connect string gave (a TLS certificate names that).
	addrs []string
	names map[string]string
	// probeAfter is how long a handshake may stay unanswered before the server is asked whether
	// it is a Kafka broker (a broker takes a ZooKeeper ConnectRequest without a word).
	probeAfter time.Duration

	mu     sync.Mutex
	bad    map[string]error // the latest verdict of each address found unusable
	probed map[string]bool  // addresses already asked whether they are Kafka
	failed chan struct{}    // closed once every address is bad
	err    error            // the verdicts at that moment, for Open's error
}

// newOpenCheck resolves hosts; nil (no early verdict, Open waits as before) when one does not
// resolve: go-zookeeper reports that itself.
func newOpenCheck(ctx context.Context, hosts []string, timeout time.Duration) *openCheck {
	o := &openCheck{probeAfter: min(time.Second, timeout/4), bad: map[string]error{}, probed: map[string]bool{},
		failed: make(chan struct{}), names: map[string]string{}}
	for _, h := range hosts {
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			return nil
		}
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			return nil
		}
		for _, ip := range ips {
			a := net.JoinHostPort(ip, port)
			o.addrs = append(o.addrs, a)
			o.names[a] = host
		}
	}
	if len(o.addrs) == 0 {
		return nil
	}
	return o
}

// dialed records the outcome of one dial. A refusal is a verdict; a connection that is accepted
// clears an earlier refusal (the server has started) but not a "not ZooKeeper".
func (o *openCheck) dialed(addr string, err error) {
	if o == nil {
		return
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		o.markBad(addr, err)
		return
	}
	if err == nil {
		o.mu.Lock()
		if errors.Is(o.bad[addr], syscall.ECONNREFUSED) {
			delete(o.bad, addr)
		}
		o.mu.Unlock()
	}
}

func (o *openCheck) markBad(addr string, err error) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bad[addr] = err
	if o.err != nil {
		return
	}
	verdicts := make([]any, 0, len(o.addrs))
	refused := true
	for _, a := range o.addrs {
		v, ok := o.bad[a]
		if !ok {
			return
		}
		verdicts = append(verdicts, v)
		refused = refused && errors.Is(v, syscall.ECONNREFUSED)
	}
	format := strings.TrimSuffix(strings.Repeat("%w; ", len(verdicts)), "; ")
	if refused {
		format = "every server refused the connection (is ZooKeeper running there?): " + format
	}
	o.err = fmt.Errorf(format, verdicts...)
	close(o.failed)
}

// failure is the channel closed when every address is bad (nil, never closed, without a check).
func (o *openCheck) failure() <-chan struct{} {
	if o == nil {
		return nil
	}
	return o.failed
}

func (o *openCheck) error() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// verdict is what was found of addr.
func (o *openCheck) verdict(addr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bad[addr]
}

// name is the host the connect string gave for addr (addr's host without a check).
func (o *openCheck) name(addr string) string {
	if o != nil {
		if n, ok := o.names[addr]; ok {
			return n
		}
	}
	host, _, _ := net.SplitHostPort(addr)
	return host
}

// probe asks addr, once per Open, whether it answers Kafka's ApiVersions request or a TLS
// ClientHello, and records it as not (plain) ZooKeeper if so. A ZooKeeper server closes such a
// connection at once: the probe costs it one or two short connections.
func (o *openCheck) probe(addr string) bool {
	o.mu.Lock()
	done := o.probed[addr]
	o.probed[addr] = true
	o.mu.Unlock()
	switch {
	case done:
		return false
	case answersAsKafka(addr, 2*time.Second):
		o.markBad(addr, &NotZooKeeperError{Addr: addr, Hint: "is it a Kafka broker?"})
	case speaksTLS(addr, 2*time.Second):
		o.markBad(addr, &NotZooKeeperError{Addr: addr, Hint: "it expects TLS (a secureClientPort): connect with --zk-tls (or --zk-tls-config-file)"})
	default:
		return false
	}
	return true
}

// answersAsKafka sends a Kafka ApiVersions v0 request (the one every broker version answers)
// and reports whether the reply carries its correlation id.
func answersAsKafka(addr string, timeout time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return false
	}
	defer c.Close() // a probe: a failed close loses nothing
	const correlationID = 0x7a6b324b
	clientID := "zk2kafka"
	req := binary.BigEndian.AppendUint32(nil, uint32(2+2+4+2+len(clientID)))
	req = binary.BigEndian.AppendUint16(req, 18) // ApiVersions
	req = binary.BigEndian.AppendUint16(req, 0)  // version 0
	req = binary.BigEndian.AppendUint32(req, correlationID)
	req = binary.BigEndian.AppendUint16(req, uint16(len(clientID)))
	req = append(req, clientID...)
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return false
	}
	if _, err := c.Write(req); err != nil {
		return false
	}
	var resp [8]byte // length, correlation id
	if _, err := io.ReadFull(c, resp[:]); err != nil {
		return false
	}
	return binary.BigEndian.Uint32(resp[4:]) == correlationID
}

// checkConnectResponse judges the first bytes a server sent on a connection, which must be a
// ZooKeeper ConnectResponse: length 36 (37 with the read-only flag of 3.4+), then protocol
// version 0. Anything else is not ZooKeeper; go-zookeeper would take the first four bytes of any
// answer as a length and allocate that much (an HTTP server's "HTTP" is 1.2 GB).
func checkConnectResponse(addr string, head []byte) error {
	bad := false
	if len(head) >= 4 {
		n := binary.BigEndian.Uint32(head)
		bad = n < 20 || n > 1024
	}
	if len(head) >= 8 && binary.BigEndian.Uint32(head[4:]) != 0 {
		bad = true
	}
	if !bad {
		return nil
	}
	return &NotZooKeeperError{Addr: addr, Hint: fmt.Sprintf("its first bytes are %q, not a ZooKeeper handshake", head)}
}
