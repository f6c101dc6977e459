package zkreader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// sidePair returns a side-channel client end and the raw server end of one TCP connection.
func sidePair(t *testing.T, zxid *atomic.Int64) (*coalescingConn, net.Conn) {
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
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	c := newSideConn(raw, zxid)
	t.Cleanup(func() { c.Close(); server.Close() })
	for _, x := range []net.Conn{c, server} {
		if err := x.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return c, server
}

// frame is a length-prefixed frame.
func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// reply is a framed answer: ReplyHeader{xid, zxid, err} and body.
func reply(xid int32, zxid int64, code int32, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	b = binary.BigEndian.AppendUint32(b, uint32(code))
	return frame(append(b, body...))
}

// connectResponse is a framed ConnectResponse (protocol version, timeout, session id, password).
var connectResponse = frame(append([]byte{0, 0, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 16}, make([]byte, 16)...))

// readSent reads one framed request from the server end: xid, opcode, body.
func readSent(t *testing.T, server net.Conn) (int32, int32, []byte) {
	t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(server, hdr[:]); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(server, b); err != nil {
		t.Fatal(err)
	}
	return int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:])), b[8:]
}

// TestSideChannel: what go-zookeeper reads is exactly the server's bytes without the answers
// to our requests, whatever they are interleaved with; our requests are refused until the
// connection is past the handshake and credentials; a connection that breaks fails the
// requests in flight with errSideLost.
func TestSideChannel(t *testing.T) {
	cases := []struct {
		name string
		// before is what the server sends before our request; readyAfter says whether the
		// request is then accepted.
		before     [][]byte
		readyAfter bool
		// answer is what the server sends after our request (with our xid); theirs is what
		// go-zookeeper must read of it; the connection then ends.
		answer func(xid int32) [][]byte
		theirs [][]byte
		want   string // our answer's body, or "lost": the connection ended first
	}{
		{name: "handshake only: not ready", before: [][]byte{connectResponse}},
		{name: "a watch event does not make it ready", before: [][]byte{connectResponse, reply(-1, 0, 0, "event")}},
		{name: "ready after an answer to go-zookeeper",
			before: [][]byte{connectResponse, reply(1, 5, 0, "auth ok")}, readyAfter: true,
			answer: func(xid int32) [][]byte {
				return [][]byte{reply(2, 6, 0, "theirs"), reply(xid, 7, 0, "ours"), reply(-1, 0, 0, "event"), reply(-2, 0, 0, "")}
			},
			theirs: [][]byte{reply(2, 6, 0, "theirs"), reply(-1, 0, 0, "event"), reply(-2, 0, 0, "")},
			want:   "ours"},
		{name: "ready after a ping answer", before: [][]byte{connectResponse, reply(-2, 0, 0, "")}, readyAfter: true,
			answer: func(xid int32) [][]byte { return [][]byte{reply(xid, 7, 0, string(bytes.Repeat([]byte("x"), 200000)))} },
			want:   string(bytes.Repeat([]byte("x"), 200000))},
		{name: "a frame cut short fails the request in flight", before: [][]byte{connectResponse, reply(1, 5, 0, "")}, readyAfter: true,
			answer: func(xid int32) [][]byte { return [][]byte{reply(xid, 7, 0, "ours, cut")[:20]} }, want: "lost"},
		{name: "a connection closed with the request in flight", before: [][]byte{connectResponse, reply(1, 5, 0, "")}, readyAfter: true,
			answer: func(int32) [][]byte { return [][]byte{reply(3, 6, 0, "theirs")} }, theirs: [][]byte{reply(3, 6, 0, "theirs")},
			want: "lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var zxid atomic.Int64
			cc, server := sidePair(t, &zxid)
			for _, b := range c.before {
				mustWrite(t, server, b)
			}
			readExactly(t, cc, bytes.Join(c.before, nil))
			xid, ch, err := cc.sideSend(opMultiRead, []byte("body"))
			if !c.readyAfter {
				if !errors.Is(err, errSideNotReady) {
					t.Fatalf("sideSend before ready: %v, want errSideNotReady", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotXid, op, body := readSent(t, server)
			if gotXid != xid || !isSideXid(xid) || op != opMultiRead || string(body) != "body" {
				t.Fatalf("server got xid %d op %d body %q; sent xid %d", gotXid, op, body, xid)
			}
			for _, b := range c.answer(xid) {
				mustWrite(t, server, b)
			}
			// go-zookeeper's receive loop reads until the connection ends; the answers to ours
			// are taken out as it goes.
			server.Close()
			theirs, err := io.ReadAll(cc) // to io.EOF, or the error of a frame cut short
			if !bytes.Equal(theirs, bytes.Join(c.theirs, nil)) {
				t.Fatalf("go-zookeeper read %.60q (%v); want %.60q", theirs, err, bytes.Join(c.theirs, nil))
			}
			got, err := cc.sideWait(context.Background(), xid, ch)
			switch {
			case c.want == "lost":
				if !errors.Is(err, errSideLost) {
					t.Fatalf("answer %q, %v; want errSideLost", got.body, err)
				}
				if _, _, err := cc.sideSend(opMultiRead, nil); err == nil {
					t.Fatal("a request after the connection broke was accepted")
				}
			case err != nil || string(got.body) != c.want || got.zxid != 7:
				t.Fatalf("answer %.20q zxid %d, %v; want %.20q zxid 7", got.body, got.zxid, err, c.want)
			case zxid.Load() != 7:
				t.Fatalf("session zxid %d after an answer at 7", zxid.Load())
			}
		})
	}
}

// TestConnectRequestCarriesSideZxid: after our answers carried zxid Z, the next connection's
// ConnectRequest claims at least Z, so no server behind Z resumes the session; one that
// claims more already goes out unchanged, and only the first frame is touched.
func TestConnectRequestCarriesSideZxid(t *testing.T) {
	connect := func(zxid int64) []byte {
		b := binary.BigEndian.AppendUint32(nil, 0)
		b = binary.BigEndian.AppendUint64(b, uint64(zxid))
		return frame(append(b, make([]byte, 32)...))
	}
	cases := []struct{ seen, claimed, want int64 }{{0, 0, 0}, {90, 40, 90}, {40, 90, 90}}
	for _, c := range cases {
		var zxid atomic.Int64
		zxid.Store(c.seen)
		cc, server := sidePair(t, &zxid)
		for _, b := range [][]byte{connect(c.claimed), connect(c.claimed)} {
			if _, err := cc.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]byte, 2*len(connect(0)))
		if _, err := io.ReadFull(server, got); err != nil {
			t.Fatal(err)
		}
		first, second := int64(binary.BigEndian.Uint64(got[8:])), int64(binary.BigEndian.Uint64(got[len(got)/2+8:]))
		if first != c.want || second != c.claimed {
			t.Errorf("seen %d, claimed %d: sent %d then %d, want %d then %d", c.seen, c.claimed, first, second, c.want, c.claimed)
		}
	}
}

func mustWrite(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// readExactly reads len(want) bytes through c in small reads, as go-zookeeper's receive loop
// does (length, then body), and compares them.
func readExactly(t *testing.T, c net.Conn, want []byte) {
	t.Helper()
	got := make([]byte, 0, len(want))
	buf := make([]byte, 7)
	for len(got) < len(want) {
		n, err := c.Read(buf[:min(len(buf), len(want)-len(got))])
		if err != nil {
			t.Fatalf("read after %d of %d bytes: %v", len(got), len(want), err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("go-zookeeper would read\n%q\nwant\n%q", got, want)
	}
}

// TestSideAnswersKeepTheReadAlive: go-zookeeper sets a read deadline before each frame it
// reads; answers of ours arriving for longer than that, with no frame of its own among them,
// must not time its read out, as the same answers to its own requests would not have.
func TestSideAnswersKeepTheReadAlive(t *testing.T) {
	var zxid atomic.Int64
	cc, server := sidePair(t, &zxid)
	mustWrite(t, server, append(append([]byte(nil), connectResponse...), reply(1, 5, 0, "")...))
	readExactly(t, cc, append(append([]byte(nil), connectResponse...), reply(1, 5, 0, "")...))
	const answers, gap, deadline = 8, 500 * time.Millisecond, 2 * time.Second
	var chans []<-chan sideReply
	var xids []int32
	for range answers {
		xid, ch, err := cc.sideSend(opMultiRead, nil)
		if err != nil {
			t.Fatal(err)
		}
		xids, chans = append(xids, xid), append(chans, ch)
	}
	go func() {
		for _, xid := range xids {
			time.Sleep(gap) // paces the server: the answers span twice the deadline
			if _, err := server.Write(reply(xid, 6, 0, "ours")); err != nil {
				return
			}
		}
		_, _ = server.Write(reply(2, 7, 0, "theirs")) // a failed write shows as the read's error
	}()
	if err := cc.SetReadDeadline(time.Now().Add(deadline)); err != nil {
		t.Fatal(err)
	}
	readExactly(t, cc, reply(2, 7, 0, "theirs"))
	for i, ch := range chans {
		if r, err := cc.sideWait(context.Background(), xids[i], ch); err != nil || string(r.body) != "ours" {
			t.Fatalf("answer %d: %q, %v", i, r.body, err)
		}
	}
}
