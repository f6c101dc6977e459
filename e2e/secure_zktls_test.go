package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/clientprops"
	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// newZKTLSEnv is newSecureEnv with the legacy offsets on the secure profile's TLS-only
// ZooKeeper (a Netty secureClientPort requiring client certificates). The test's own ZooKeeper
// clients read the stack's ZooKeeper TLS file; zk2kafka gets its flags per test (zkArgs).
func newZKTLSEnv(t *testing.T) *env {
	t.Helper()
	st := stacktest.GetSecure(t)
	zkTLS, err := clientprops.ZooKeeperTLS(st.ZKTLSConfigFile)
	if err != nil || zkTLS == nil {
		t.Fatalf("the stack's ZooKeeper TLS file %s: %v (TLS on: %v)", st.ZKTLSConfigFile, err, zkTLS != nil)
	}
	e := newEnvAt(t, st, kafkaconn.Security{TLS: true, CAFile: st.CAFile, Mechanism: kafkaconn.MechanismPlain,
		User: st.AdminUser, Password: kafkaconn.Secret(readSecret(t, st.AdminPasswordFile))}, st.ZKTLS, zkTLS)
	e.kafkaArgs = e.userArgs(kafkaconn.MechanismPlain, st.PasswordFile)
	return e
}

// zkShell runs Kafka's own zookeeper-shell over TLS with the stack's TLS file.
func (e *env) zkShell(commands ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	out, err := e.st.ZooKeeperShell(ctx, e.st.ZKTLS, strings.Join(commands, "\n")+"\n")
	if err != nil {
		e.t.Fatalf("zookeeper-shell: %v\n%s", err, out)
	}
	return out
}

func (e *env) offsetZnode(group, topic string, partition int32) string {
	return fmt.Sprintf("%s/consumers/%s/offsets/%s/%d", e.chroot, group, topic, partition)
}

// TestSecureZooKeeperTLS: Kafka's own zookeeper-shell writes legacy offsets through the stack's
// ZooKeeper TLS file; zk2kafka, given that same file unchanged (--zk-tls-config-file: a JKS
// trust store, a PKCS12 key store) or the PEM flags, runs plan, copy --execute, verify --mark,
// export and dual-commit over TLS. Kafka's consumer-groups tool and zookeeper-shell check what
// was written on either side.
func TestSecureZooKeeperTLS(t *testing.T) {
	e := newZKTLSEnv(t)
	fileArgs := []string{"--zk-tls-config-file", e.st.ZKTLSConfigFile}
	pemArgs := []string{"--zk-tls", "--zk-tls-ca-file", e.st.CAFile, "--zk-tls-cert-file", e.st.ClientCertFile, "--zk-tls-key-file", e.st.ClientKeyFile}
	topic := e.topic(10, 10, 10)
	g := e.group()
	zkOffsets := map[int32]int64{0: 3, 1: 7, 2: 10}
	e.ensure(path.Dir(e.offsetZnode(g, topic, 0)))
	var creates []string
	for p, off := range zkOffsets {
		creates = append(creates, fmt.Sprintf("create %s %d", e.offsetZnode(g, topic, p), off))
	}
	e.zkShell(creates...)

	e.zkArgs = fileArgs
	planFile := e.file("plan")
	plan := e.mustCLI(0, "migrate", "plan", "--out", planFile, "--log-level", "debug")
	// The version question (srvr) goes over TLS too: the TLS ZooKeeper (3.8) gets multiRead.
	if !strings.Contains(plan.stderr, "multiread=true") {
		t.Errorf("plan over TLS did not take the multiRead path:\n%s", plan.stderr)
	}
	e.zkArgs = pemArgs
	e.mustCLI(0, "migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup"))
	if got, w := e.st.DescribeOffsets(t, g), want(topic, zkOffsets); !maps.Equal(got, w) {
		t.Fatalf("consumer-groups --describe %s: %v, want %v", g, got, w)
	}
	e.zkArgs = fileArgs
	e.mustCLI(0, "migrate", "verify", "--mark")
	marker := e.zkShell("get " + path.Join(e.chroot, "consumers", g, "zk2kafka-migrated"))
	if !strings.Contains(marker, `"migrated_at"`) || !strings.Contains(marker, `"offsets":3`) {
		t.Errorf("zookeeper-shell finds no cutover marker written over TLS:\n%s", marker)
	}
	exportFile := e.file("export")
	e.mustCLI(0, "export", "--group", g, "--from", "zk", "--file", exportFile)
	if b, err := os.ReadFile(exportFile); err != nil || !strings.Contains(string(b), topic) {
		t.Errorf("export over TLS lacks topic %s: %v\n%s", topic, err, b)
	}

	// dual-commit: the watcher and the lease hold their session over TLS too.
	run := e.dualCommit("--group", g, "--execute")
	e.zkShell(fmt.Sprintf("set %s 9", e.offsetZnode(g, topic, 0)))
	waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", e.offsets(g), run.stderr) }, func() bool {
		return e.offsets(g)[fmt.Sprintf("%s/0", topic)] == 9
	})
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit over TLS exit %d\n%s", code, run.stderr)
	}
}

// TestSecureZooKeeperTLSRefused: each wrong way to reach the TLS-only ZooKeeper is one error,
// at once (Open does not wait out the session timeout), that says what is wrong, and nothing is
// written to Kafka.
func TestSecureZooKeeperTLSRefused(t *testing.T) {
	e := newZKTLSEnv(t)
	topic := e.topic(5)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2})
	dir := t.TempDir()
	unknownKey := filepath.Join(dir, "unknown.properties")
	b, err := os.ReadFile(e.st.ZKTLSConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unknownKey, append(b, []byte("zookeeper.ssl.keystore.lcoation=/typo\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(strings.SplitN(strings.SplitN(string(b), "keystore.password=", 2)[1], "\n", 2)[0])
	cases := []struct {
		name string
		zk   string
		args []string
		want []string
	}{
		{"plain client on the TLS port", e.st.ZKTLS, nil, []string{"expects TLS", "--zk-tls"}},
		{"wrong CA", e.st.ZKTLS, []string{"--zk-tls", "--zk-tls-ca-file", e.st.OtherCAFile, "--zk-tls-cert-file", e.st.ClientCertFile,
			"--zk-tls-key-file", e.st.ClientKeyFile}, []string{"unknown authority", "--zk-tls-ca-file"}},
		{"no client certificate", e.st.ZKTLS, []string{"--zk-tls", "--zk-tls-ca-file", e.st.CAFile}, []string{"client certificate", "--zk-tls-cert-file"}},
		{"client certificate from another CA", e.st.ZKTLS, []string{"--zk-tls", "--zk-tls-ca-file", e.st.CAFile, "--zk-tls-cert-file", e.st.OtherClientCertFile,
			"--zk-tls-key-file", e.st.OtherClientKeyFile}, []string{"refused", "client certificate"}},
		{"TLS to a plain port", e.st.ZK, []string{"--zk-tls", "--zk-tls-ca-file", e.st.CAFile}, []string{"plain (non-TLS)"}},
		{"unknown key in the TLS file", e.st.ZKTLS, []string{"--zk-tls-config-file", unknownKey}, []string{"zookeeper.ssl.keystore.lcoation", unknownKey}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.sub(t)
			s.zkArgs = c.args
			start := time.Now()
			r := s.cliAt(c.zk+e.chroot, "migrate", "copy", "--execute", "--backup", s.file("backup"))
			s.checkRefused(r, g, c.want, password)
			// Not a timing assertion: the default session timeout is 10 s, and a refusal that
			// waited it out would say "not reachable within".
			if strings.Contains(r.stderr, "not reachable within") {
				t.Errorf("the refusal waited out the session timeout (%s):\n%s", time.Since(start), r)
			}
		})
	}
}
