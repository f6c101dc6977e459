package zkreader

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// openTimeout is the session timeout of the fail-fast tests: long, so that an Open that returns
// within half of it can only have returned on the early verdict, never on the timeout.
const openTimeout = 20 * time.Second

// fakeKafka answers Kafka's ApiVersions (its correlation id back) and, like a real broker given
// a ZooKeeper ConnectRequest, nothing else.
func fakeKafka(c net.Conn) {
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if len(body) >= 8 && binary.BigEndian.Uint16(body) == 18 {
			resp := binary.BigEndian.AppendUint32(nil, 4+2+4)
			resp = append(resp, body[4:8]...)
			resp = append(resp, 0, 0, 0, 0, 0, 0)
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	}
}

// openFast opens cfg.Servers expecting the early failure: it fails the test when Open succeeds
// or takes half the session timeout (the contract: these failures never wait for it).
func openFast(t *testing.T, servers string) error {
	t.Helper()
	start := time.Now()
	r, err := Open(context.Background(), Config{Servers: servers, SessionTimeout: openTimeout, Connections: 4})
	took := time.Since(start)
	if err == nil {
		r.Close()
		t.Fatalf("Open(%s) succeeded", servers)
	}
	if took >= openTimeout/2 {
		t.Errorf("Open(%s) returned after %v, want well within the session timeout %v: %v", servers, took, openTimeout, err)
	}
	return err
}

func TestOpenFailsAtOnceWhenEveryServerRefuses(t *testing.T) {
	a, b := stacktest.ClosedPort(t), stacktest.ClosedPort(t)
	err := openFast(t, a+","+b)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v does not wrap ECONNREFUSED", err)
	}
	want := "zookeeper " + a + "," + b + ": every server refused the connection (is ZooKeeper running there?): "
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error = %q, want it to start with %q", got, want)
	}
	for _, addr := range []string{a, b} {
		if !containsAll(err.Error(), "dial tcp "+addr+": connect: connection refused") {
			t.Errorf("error %q does not name the refusal of %s", err, addr)
		}
	}
}

func TestOpenNamesAServerThatIsNotZooKeeper(t *testing.T) {
	garbage := stacktest.Serve(t, func(c net.Conn) {
		if _, err := c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c) // the client ends the connection
	})
	kafka := stacktest.Serve(t, fakeKafka)
	refused := stacktest.ClosedPort(t)
	tests := []struct{ name, servers, want string }{
		{"garbage", garbage, "zookeeper " + garbage + ": " + garbage + ` does not answer as ZooKeeper: its first bytes are "HTTP", not a ZooKeeper handshake`},
		{"kafka", kafka, "zookeeper " + kafka + ": " + kafka + " does not answer as ZooKeeper: is it a Kafka broker?"},
		{"kafka and refused", kafka + "," + refused, "zookeeper " + kafka + "," + refused + ": "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := openFast(t, tt.servers)
			var nz *NotZooKeeperError
			if !errors.As(err, &nz) {
				t.Fatalf("error %v is not a *NotZooKeeperError", err)
			}
			if tt.name == "kafka and refused" {
				if !containsAll(err.Error(), kafka+" does not answer as ZooKeeper: is it a Kafka broker?",
					"dial tcp "+refused+": connect: connection refused") {
					t.Errorf("error = %q, want both verdicts", err)
				}
				return
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

// TestOpenKafkaPortAsZooKeeper: the real broker given as --zk takes the ConnectRequest without
// a word; Open asks it for its ApiVersions and names it.
func TestOpenKafkaPortAsZooKeeper(t *testing.T) {
	s := stacktest.Get(t)
	err := openFast(t, s.Kafka)
	want := "zookeeper " + s.Kafka + ": " + s.Kafka + " does not answer as ZooKeeper: is it a Kafka broker?"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

// TestOpenWithOneServerRefusing: a refused server beside a working one is no verdict on the
// ensemble: Open gets its sessions from the other.
func TestOpenWithOneServerRefusing(t *testing.T) {
	s := stacktest.Get(t)
	r := openT(t, Config{Servers: stacktest.ClosedPort(t) + "," + s.ZK, Connections: 4})
	if _, err := r.ListGroups(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
