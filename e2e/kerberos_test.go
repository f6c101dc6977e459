package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// The kerberos profile's tests (scripts/stack up kerberos: an MIT KDC and Kafka 3.9 with a SASL
// GSSAPI listener). The tests' own clients use the PLAINTEXT listener; every zk2kafka command
// line goes through GSSAPI.

func newKerberosEnv(t *testing.T) *env {
	t.Helper()
	st := stacktest.GetKerberos(t)
	e := newEnvOn(t, st, kafkaconn.Security{})
	e.cliKafka = st.KafkaGSSAPI
	t.Setenv("KRB5_CONFIG", st.KRB5Config)
	return e
}

func (e *env) keytabArgs(keytab, principal string) []string {
	return []string{"--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-kerberos-keytab", keytab, "--kafka-sasl-kerberos-principal", principal}
}

// kinit fills a ticket cache of its own with the client's ticket (lifetime as kinit -l takes it).
func (e *env) kinit(lifetime string) string {
	e.t.Helper()
	cache := filepath.Join(e.t.TempDir(), "ccache")
	cmd := exec.Command("kinit", "-l", lifetime, "-k", "-t", e.st.ClientKeytab, e.st.ClientPrincipal)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+cache, "KRB5_CONFIG="+e.st.KRB5Config)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("kinit: %v\n%s", err, out)
	}
	return cache
}

// TestKerberosVerbs: plan, copy, verify (also --via-topic), export, restore and dual-commit over
// SASL GSSAPI, logged in with a keytab, with the ticket cache kinit filled, and with a
// client.properties (Krb5LoginModule) that Kafka's own consumer-groups tool reads too.
func TestKerberosVerbs(t *testing.T) {
	e := newKerberosEnv(t)
	props := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(props, []byte(fmt.Sprintf("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"+
		"sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\"%s\" principal=\"%s\";\n",
		e.st.ClientKeytab, e.st.ClientPrincipal)), 0o600); err != nil {
		t.Fatal(err)
	}
	logins := []struct {
		name string
		args func(*env) []string
	}{
		{"keytab", func(s *env) []string { return s.keytabArgs(s.st.ClientKeytab, s.st.ClientPrincipal) }},
		{"ticket cache", func(s *env) []string {
			return []string{"--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-kerberos-ccache", s.kinit("1h")}
		}},
		{"client.properties", func(*env) []string { return []string{"--command-config", props} }},
	}
	for _, l := range logins {
		t.Run(l.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = l.args(s)
			topic := s.topic(10, 10)
			g, restored := s.group(), s.group()
			offsets := map[int32]int64{0: 3, 1: 8}
			s.zkOffsets(g, topic, offsets)
			s.zkOffsets(restored, topic, offsets)
			plan := s.file("plan")
			s.mustCLI(0, "migrate", "plan", "--group", g, "--out", plan)
			s.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", s.file("backup"))
			s.mustCLI(0, "migrate", "verify", "--group", g)
			s.mustCLI(0, "migrate", "verify", "--group", g, "--via-topic")
			exp := s.file("export")
			s.mustCLI(0, "export", "--group", restored, "--file", exp)
			s.mustCLI(0, "restore", "--to", "kafka", "--file", exp, "--execute", "--backup", s.file("rbackup"))
			for _, grp := range []string{g, restored} {
				if got, w := s.st.DescribeOffsetsWith(t, grp, s.st.KafkaGSSAPI, props), want(topic, offsets); !maps.Equal(got, w) {
					t.Errorf("consumer-groups over GSSAPI --describe %s: %v, want %v", grp, got, w)
				}
			}
			// dual-commit mirrors a change through GSSAPI.
			run := s.dualCommit("--group", g, "--execute")
			s.zkOffsets(g, topic, map[int32]int64{0: 6})
			waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", s.offsets(g), run.stderr) }, func() bool {
				return s.offsets(g)[topic+"/0"] == 6
			})
			if code := run.stop(t); code != 0 {
				t.Errorf("dual-commit over GSSAPI: exit %d\n%s", code, run.stderr)
			}
		})
	}
}

// TestKerberosRefused: each way a Kerberos login goes wrong is one error naming the setting at
// fault, and nothing is written.
func TestKerberosRefused(t *testing.T) {
	e := newKerberosEnv(t)
	topic := e.topic(5)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2})
	b, err := os.ReadFile(e.st.KRB5Config)
	if err != nil {
		t.Fatal(err)
	}
	kdcDown := filepath.Join(t.TempDir(), "krb5-down.conf")
	down := stacktest.ClosedPort(t)
	if err := os.WriteFile(kdcDown, []byte(strings.ReplaceAll(string(b), e.st.KRBKDC, down)), 0o600); err != nil {
		t.Fatal(err)
	}
	expired := e.kinit("1s")
	waitFor(t, func() string { return "the 1 s ticket has not expired yet" }, func() bool {
		return exec.Command("klist", "-s", "-c", "FILE:"+expired).Run() != nil // klist -s fails once every ticket expired
	})
	keytab := func(k, p string) []string { return e.keytabArgs(k, p) }
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"a keytab of another principal", keytab(e.st.OtherKeytab, e.st.ClientPrincipal), []string{e.st.OtherKeytab, "holds no key for principal " + e.st.ClientPrincipal}},
		{"a stale keytab", keytab(e.st.OldKeytab, e.st.ClientPrincipal), []string{e.st.OldKeytab, "wrong or outdated key"}},
		{"an unknown principal", keytab(e.st.GoneKeytab, "gone"), []string{"does not know the client principal gone", "--kafka-sasl-kerberos-principal"}},
		{"a wrong service name", append(keytab(e.st.ClientKeytab, e.st.ClientPrincipal), "--kafka-sasl-kerberos-service-name", "kafak"),
			[]string{"no service principal kafak/", "--kafka-sasl-kerberos-service-name"}},
		{"the KDC down", append(keytab(e.st.ClientKeytab, e.st.ClientPrincipal), "--kafka-sasl-kerberos-config", kdcDown), []string{"no KDC answered", kdcDown}},
		{"an expired ticket", []string{"--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-kerberos-ccache", expired}, []string{"expired", "kinit", expired}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = c.args
			r := s.cli("migrate", "copy", "--group", g, "--execute", "--backup", s.file("backup"))
			s.checkRefused(r, g, c.want)
		})
	}
}
