package zkreader

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestExpiredHandshakeConnectionsAreClosed: a server that answers every handshake with session
// id 0 (ZooKeeper's answer to an expired session) makes go-zookeeper dial again without closing
// the connection it leaves. Each such connection must still be closed, by the next dial or by
// Close: left open, each held a sender goroutine, a 64 KiB buffer and a socket for good.
func TestExpiredHandshakeConnectionsAreClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted, closedByClient atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var hdr [4]byte
				if _, err := io.ReadFull(c, hdr[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:]))); err != nil {
					return
				}
				// Counted once it sent a whole ConnectRequest: Open's version question
				// ("srvr", read above as a huge length) is a connection of its own.
				accepted.Add(1)
				// ConnectResponse: protocol version, timeout, session id 0 (expired), password.
				resp := binary.BigEndian.AppendUint32(nil, 4+4+8+4+16)
				resp = binary.BigEndian.AppendUint32(resp, 0)
				resp = binary.BigEndian.AppendUint32(resp, 4000)
				resp = binary.BigEndian.AppendUint64(resp, 0)
				resp = binary.BigEndian.AppendUint32(resp, 16)
				resp = append(resp, make([]byte, 16)...)
				if _, err := c.Write(resp); err != nil {
					return
				}
				// Our end stays open: only the client closing its end ends this read.
				if _, err := io.Copy(io.Discard, c); err == nil {
					closedByClient.Add(1)
				}
			}()
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	r, err := Open(ctx, Config{Servers: l.Addr().String(), Connections: 1, SessionTimeout: 4 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		r.Close()
		t.Fatal("Open got a session from a server that only answers expired")
	}
	if n := accepted.Load(); n < 2 {
		t.Fatalf("go-zookeeper dialled %d times; the test needs it to dial again after an expired handshake", n)
	}
	// The server's readers see the closes shortly after Open returns.
	for deadline := time.Now().Add(5 * time.Second); closedByClient.Load() < accepted.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if a, c := accepted.Load(), closedByClient.Load(); c < a {
		t.Errorf("%d of %d connections left open after Open failed and closed the reader", a-c, a)
	}
}
