package e2e_test

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/cmd"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// TestWrongPorts: a store given the other store's port, or a closed one, is named for what it is,
// and well before the ZooKeeper session timeout (10 s by default) has passed.
func TestWrongPorts(t *testing.T) {
	st := stacktest.Get(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, zk, kafka, want string }{
		{"kafka port as --zk", st.Kafka, st.Kafka,
			"zk2kafka: zookeeper " + st.Kafka + ": " + st.Kafka + " does not answer as ZooKeeper: is it a Kafka broker?\n"},
		{"zookeeper port as --kafka", st.ZK, st.ZK,
			"zk2kafka: no kafka broker reachable at [" + st.ZK + "] (PLAINTEXT): " + st.ZK + " does not answer as Kafka: is it ZooKeeper?\n"},
		{"closed port as --zk", closed, st.Kafka,
			"zk2kafka: zookeeper " + closed + ": every server refused the connection (is ZooKeeper running there?): dial tcp " + closed + ": connect: connection refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			var out, errOut bytes.Buffer
			start := time.Now()
			code := cmd.Execute(ctx, []string{"migrate", "plan", "--zk", tt.zk, "--kafka", tt.kafka}, &out, &errOut)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v, want well within the 10 s session timeout", took)
			}
			if code != 1 || errOut.String() != tt.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", code, errOut.String(), tt.want)
			}
		})
	}
}

// TestCompleteGroupsFromZooKeeper: shell completion of --group reads the groups of the chroot
// given with --zk from the real ZooKeeper.
func TestCompleteGroupsFromZooKeeper(t *testing.T) {
	e := newEnv(t)
	e.ensure(e.chroot + "/consumers/billing-a/offsets")
	e.ensure(e.chroot + "/consumers/billing-b/offsets")
	e.ensure(e.chroot + "/consumers/other/offsets")
	r := e.cli("__complete", "migrate", "plan", "--group", "bil")
	if r.code != 0 || r.stdout != "billing-a\nbilling-b\n:4\n" {
		t.Errorf("want the two billing groups and :4, got %s", r)
	}
}
