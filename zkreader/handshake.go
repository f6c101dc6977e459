package zkreader

import (
	"encoding/binary"
	"net"
	"time"
)

// handshakeConn reads the session timeout the server granted off the first bytes the server
// sends on a connection: the ConnectResponse (length int32, protocolVersion int32, timeOut
// int32, sessionId int64, passwd). go-zookeeper v1.0.4 keeps the value in a private field
// (and logs it only with WithLogInfo), yet the server may grant less than was asked (its
// maxSessionTimeout) or more (its minSessionTimeout): the lease's deadlines need the real one.
// go-zookeeper reads a connection from one goroutine at a time (the handshake, then its
// receive loop, started after it), so head needs no lock.
type handshakeConn struct {
	net.Conn
	s    *session
	head [12]byte
	n    int
}

func (c *handshakeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.n < len(c.head) && n > 0 {
		c.n += copy(c.head[c.n:], p[:n])
		if c.n == len(c.head) {
			c.s.granted.Store(int32(binary.BigEndian.Uint32(c.head[8:12])))
		}
	}
	return n, err
}

// grantedTimeout is the session timeout of the latest handshake, or fallback before one.
func (s *session) grantedTimeout(fallback time.Duration) time.Duration {
	if ms := s.granted.Load(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return fallback
}
