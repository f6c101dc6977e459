package stacktest

import (
	"net"
	"testing"
)

// ClosedPort returns a loopback host:port that nothing listens on (a refused connection).
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// Serve accepts connections on a loopback port and hands each to handle until the test ends:
// a server that answers as the test wants (garbage, silence, another protocol).
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() }) //nolint:errcheck // the test is over
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close() //nolint:errcheck // the handler is done with it
				handle(c)
			}()
		}
	}()
	return l.Addr().String()
}
