package kafkaconn

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// openNotKafka negotiates with addr as the only bootstrap server and returns the
// *NotKafkaError it must fail with.
func openNotKafka(t *testing.T, addr string) (*NotKafkaError, error) {
	t.Helper()
	v, err := Negotiate(testCtx(t, time.Minute), Config{Bootstrap: []string{addr}, DialTimeout: 5 * time.Second})
	if err == nil {
		t.Fatalf("Negotiate(%s) succeeded: %s", addr, v)
	}
	var nk *NotKafkaError
	if !errors.As(err, &nk) {
		t.Fatalf("Negotiate(%s) = %v, want a *NotKafkaError", addr, err)
	}
	return nk, err
}

func TestOpenNamesAServerThatIsNotKafka(t *testing.T) {
	garbage := stacktest.Serve(t, func(c net.Conn) {
		if _, err := c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c) // the client ends the connection
	})
	// A ZooKeeper server as far as the probes go: it answers "srvr" and hangs up on anything
	// else (a Kafka request read as a ConnectRequest).
	zk := stacktest.Serve(t, func(c net.Conn) {
		var b [4]byte
		if _, err := io.ReadFull(c, b[:]); err != nil || string(b[:]) != "srvr" {
			return
		}
		_, _ = c.Write([]byte("Zookeeper version: 3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC\nMode: standalone\n"))
	})
	tests := []struct{ name, addr, want string }{
		{"garbage", garbage, "no kafka broker reachable at [" + garbage + "] (PLAINTEXT): " + garbage +
			" does not answer as Kafka: its answer is not a Kafka response (message of length 1213486160 too large or too small)"},
		{"zookeeper", zk, "no kafka broker reachable at [" + zk + "] (PLAINTEXT): " + zk + " does not answer as Kafka: is it ZooKeeper?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openNotKafka(t, tt.addr)
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

// TestOpenZooKeeperPortAsKafka: the real ZooKeeper given as --kafka hangs up on ApiVersions;
// that is not taken for a TLS listener (no --kafka-tls hint): ZooKeeper is named.
func TestOpenZooKeeperPortAsKafka(t *testing.T) {
	s := stacktest.Get(t)
	nk, err := openNotKafka(t, s.ZK)
	want := s.ZK + " does not answer as Kafka: is it ZooKeeper?"
	if nk.Error() != want || strings.Contains(err.Error(), "--kafka-tls") {
		t.Errorf("error = %q, want %q without a --kafka-tls hint", err, want)
	}
}
