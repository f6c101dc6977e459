package zkreader

import (
	"encoding/binary"
	"net"
	"time"
)

// handshakeConn watches the first bytes the server sends on a connection: the ConnectResponse
// (length int32, protocolVersion int32, timeOut int32, sessionId int64, passwd).
//
// It reads the session timeout the server granted off them: go-zookeeper v1.0.4 keeps the value
// in a private field (and logs it only with WithLogInfo), yet the server may grant less than was
// asked (its maxSessionTimeout) or more (its minSessionTimeout): the lease's deadlines need the
// real one.
//
// Before the first session it also tells Open's check (diagnose.go) about a server that is not
// ZooKeeper: bytes that cannot start a ConnectResponse end the read with a NotZooKeeperError, and
// a handshake left unanswered for a moment has the server asked whether it is a Kafka broker.
//
// go-zookeeper reads a connection from one goroutine at a time (the handshake, then its
// receive loop, started after it), so head needs no lock.
type handshakeConn struct {
	net.Conn
	s    *session
	addr string
	head [12]byte
	n    int
}

func (c *handshakeConn) Read(p []byte) (int, error) {
	if c.n == len(c.head) {
		return c.Conn.Read(p)
	}
	stop := c.probeIfSilent()
	n, err := c.Conn.Read(p)
	stop()
	if n == 0 && c.n == 0 && err != nil && c.beforeFirstSession() {
		if refused := refusedByServer(c.addr, err); refused != nil {
			c.s.check.markBad(c.addr, refused)
			return 0, refused
		}
		if c.s.check.probe(c.addr) {
			// Closed without a word: Kafka 4.x drops a connection whose first request it
			// cannot parse (3.9 stays silent, which the timer above catches), and a
			// secureClientPort one that does not start with a TLS ClientHello.
			return 0, c.s.check.verdict(c.addr)
		}
	}
	if n > 0 {
		c.n += copy(c.head[c.n:], p[:n])
		if bad := checkConnectResponse(c.addr, c.head[:c.n]); bad != nil {
			c.s.check.markBad(c.addr, bad)
			return 0, bad
		}
		if c.n == len(c.head) {
			c.s.granted.Store(int32(binary.BigEndian.Uint32(c.head[8:12])))
		}
	}
	return n, err
}

// probeIfSilent arranges, while Open still waits for the first session, for the server to be
// asked whether it is Kafka if nothing has arrived after the check's probeAfter; a Kafka broker
// found so has this connection closed, which ends the handshake. It returns the timer's stop.
func (c *handshakeConn) probeIfSilent() func() bool {
	o := c.s.check
	if c.n > 0 || !c.beforeFirstSession() {
		return func() bool { return false }
	}
	t := time.AfterFunc(o.probeAfter, func() {
		if o.probe(c.addr) {
			_ = c.Conn.Close() // an error says it is closed already
		}
	})
	return t.Stop
}

// beforeFirstSession says whether Open still waits for this connection's first session, with a
// check to tell.
func (c *handshakeConn) beforeFirstSession() bool {
	if c.s.check == nil {
		return false
	}
	select {
	case <-c.s.ready:
		return false
	default:
		return true
	}
}

// grantedTimeout is the session timeout of the latest handshake, or fallback before one.
func (s *session) grantedTimeout(fallback time.Duration) time.Duration {
	if ms := s.granted.Load(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return fallback
}
