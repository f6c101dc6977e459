package zkreader

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// loopbackPair returns a coalescing client end and the raw server end of one TCP connection.
func loopbackPair(t *testing.T) (*coalescingConn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := DialCoalescing("tcp", l.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); server.Close() })
	return c.(*coalescingConn), server
}

// TestCoalescingConnKeepsEveryByteInOrder: many small writes (as go-zookeeper's send loop
// makes, one per request) arrive whole and in order, and responses read back through the
// buffered reader are the server's bytes exactly.
func TestCoalescingConnKeepsEveryByteInOrder(t *testing.T) {
	c, server := loopbackPair(t)
	var want bytes.Buffer
	for i := range 5000 {
		p := bytes.Repeat([]byte{byte(i)}, 1+i%97)
		want.Write(p)
		if err := c.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	got := make([]byte, want.Len())
	if err := server.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatalf("server read: %v", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the server received other bytes than were written")
	}

	reply := bytes.Repeat([]byte("response"), 20000)
	go func() {
		if _, err := server.Write(reply); err != nil {
			t.Error(err)
		}
	}()
	back := make([]byte, len(reply))
	if _, err := io.ReadFull(c, back); err != nil || !bytes.Equal(back, reply) {
		t.Fatalf("client read: %v (equal %v)", err, bytes.Equal(back, reply))
	}
}

// TestCoalescingConnReportsAFailedSend: once the peer is gone, a send fails, a later Write
// returns the error and reads end: go-zookeeper then reconnects as for its own write error.
func TestCoalescingConnReportsAFailedSend(t *testing.T) {
	c, server := loopbackPair(t)
	if tcp, ok := server.(*net.TCPConn); ok {
		if err := tcp.SetLinger(0); err != nil { // close with a reset, not a FIN
			t.Fatal(err)
		}
	}
	server.Close()
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		_, err = c.Write(make([]byte, 64<<10))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	if _, rerr := c.Read(make([]byte, 1)); rerr == nil {
		t.Fatal("read from a failed connection succeeded")
	}
}
