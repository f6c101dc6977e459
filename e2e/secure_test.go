package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
)

// The secure profile's tests (scripts/stack up secure: Kafka behind SASL_SSL only, ACLs on).
// They skip on the plaintext profiles, as the plaintext tests skip on this one. They do not run
// in parallel: one of them sets the password environment variable.

const envPassword = "ZK2KAFKA_KAFKA_SASL_PASSWORD"

// newSecureEnv is newEnv on the secure stack; the test's own clients connect as the super user,
// so what they read back is not limited by the test user's ACLs.
func newSecureEnv(t *testing.T) *env {
	t.Helper()
	st := stacktest.GetSecure(t)
	return newEnvOn(t, st, kafkaconn.Security{TLS: true, CAFile: st.CAFile, Mechanism: kafkaconn.MechanismPlain,
		User: st.AdminUser, Password: kafkaconn.Secret(readSecret(t, st.AdminPasswordFile))})
}

func readSecret(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 8 {
		t.Fatalf("%s: a secret this short would match output by chance", file)
	}
	return s
}

// userArgs are the command-line flags of the ACL-limited test user with mechanism mech.
func (e *env) userArgs(mech string, passwordFile string) []string {
	args := []string{"--kafka-tls", "--kafka-tls-ca-file", e.st.CAFile, "--kafka-sasl-mechanism", mech, "--kafka-sasl-user", e.st.User}
	if passwordFile != "" {
		args = append(args, "--kafka-sasl-password-file", passwordFile)
	}
	return args
}

// assertHidden fails when secret appears in any output of the runs.
func assertHidden(t *testing.T, secret string, runs ...result) {
	t.Helper()
	for _, r := range runs {
		if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("the password appears in the output:\n%s", r)
		}
	}
}

// TestSecureCopyEachMechanism runs plan, copy --execute and verify through SASL_SSL as the test
// user with each mechanism (the password from a file, or for SCRAM-SHA-256 from the
// environment), with --debug on, and checks the result with Kafka's own consumer-groups tool.
func TestSecureCopyEachMechanism(t *testing.T) {
	for _, mech := range kafkaconn.PasswordMechanisms() {
		t.Run(mech, func(t *testing.T) {
			e := newSecureEnv(t)
			password := readSecret(t, e.st.PasswordFile)
			if mech == kafkaconn.MechanismSCRAMSHA256 {
				t.Setenv(envPassword, password)
				e.kafkaArgs = e.userArgs(mech, "")
			} else {
				e.kafkaArgs = e.userArgs(mech, e.st.PasswordFile)
			}
			topic := e.topic(10, 10, 10)
			g := e.group()
			zkOffsets := map[int32]int64{0: 3, 1: 7, 2: 10}
			e.zkOffsets(g, topic, zkOffsets)

			planFile := e.file("plan")
			plan := e.mustCLI(0, "--debug", "migrate", "plan", "--out", planFile)
			// Our own debug logs and sarama's (its connection lines), else the secret
			// check below would prove little.
			if !strings.Contains(plan.stderr, "kafka protocol level") || !strings.Contains(plan.stderr, "Connected to broker") {
				t.Fatalf("--debug did not log ours and sarama's debug lines\n%s", plan)
			}
			cp := e.mustCLI(0, "--debug", "migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup"), "-o", "json")
			doc := decodeJSON[copyDoc](t, cp)
			if n := doc.Counts[copier.StatusWritten]; n != 3 || len(doc.Counts) != 1 {
				t.Fatalf("counts %v, want 3 written and nothing else\n%s", doc.Counts, cp)
			}
			verify := e.mustCLI(0, "migrate", "verify")
			runs := []result{plan, cp, verify}
			if mech == kafkaconn.MechanismPlain {
				// The independent reader of __consumer_offsets connects the same way.
				runs = append(runs, e.mustCLI(0, "--debug", "migrate", "verify", "--via-topic"))
			}
			assertHidden(t, password, runs...)
			if got, w := e.st.DescribeOffsets(t, g), want(topic, zkOffsets); !maps.Equal(got, w) {
				t.Errorf("consumer-groups --describe %s: %v, want %v", g, got, w)
			}
		})
	}
}

// TestSecureWrongPassword: a refused login is one clear error naming the broker, mechanism and
// user, exit 1, and nothing is written.
func TestSecureWrongPassword(t *testing.T) {
	e := newSecureEnv(t)
	topic := e.topic(5)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2})
	wrong := filepath.Join(t.TempDir(), "wrong.password")
	const wrongPassword = "not-the-password-7f3a9c"
	if err := os.WriteFile(wrong, []byte(wrongPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mech := range []string{kafkaconn.MechanismPlain, kafkaconn.MechanismSCRAMSHA512} {
		t.Run(mech, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = s.userArgs(mech, wrong)
			r := s.cli("migrate", "copy", "--execute", "--backup", s.file("backup"))
			if r.code != 1 {
				t.Fatalf("want exit 1, got %s", r)
			}
			for _, w := range []string{"refused SASL " + mech + " authentication", e.st.Kafka, `user "` + e.st.User + `"`} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r)
				}
			}
			assertHidden(t, wrongPassword, r)
			if got := s.offsets(g); len(got) != 0 {
				t.Errorf("group %s has commits after a refused login: %v", g, got)
			}
		})
	}
}

// TestSecureDeniedGroup: the test user may not commit to groups with the denied prefix (ACL).
// The copy writes the allowed group, reports every partition of the denied one as failed with
// the authorization error, exits 1 and writes nothing for it.
func TestSecureDeniedGroup(t *testing.T) {
	e := newSecureEnv(t)
	e.kafkaArgs = e.userArgs(kafkaconn.MechanismSCRAMSHA256, e.st.PasswordFile)
	topic := e.topic(10, 10)
	ok := e.group()
	denied := e.st.DeniedGroupPrefix + stacktest.Name(t, "g")
	e.deleteGroupAtEnd(denied)
	offsets := map[int32]int64{0: 4, 1: 6}
	e.zkOffsets(ok, topic, offsets)
	e.zkOffsets(denied, topic, offsets)

	planFile := e.file("plan")
	e.mustCLI(0, "migrate", "plan", "--out", planFile)
	r := e.cli("migrate", "copy", "--plan", planFile, "--execute", "--backup", e.file("backup"), "-o", "json")
	if r.code != 1 {
		t.Fatalf("want exit 1, got %s", r)
	}
	doc := decodeJSON[copyDoc](t, r)
	seen := map[string]int{}
	for _, gr := range doc.Result.Groups {
		for _, p := range gr.Partitions {
			seen[gr.Group]++
			switch gr.Group {
			case ok:
				if p.Status != copier.StatusWritten {
					t.Errorf("allowed group %s %s/%d: %s %s, want written", ok, p.Topic, p.Partition, p.Status, p.Reason)
				}
			case denied:
				if p.Status != copier.StatusFailed || !strings.Contains(p.Reason, "GROUP_AUTHORIZATION_FAILED") {
					t.Errorf("denied group %s %s/%d: %s %q, want failed with GROUP_AUTHORIZATION_FAILED", denied, p.Topic, p.Partition, p.Status, p.Reason)
				}
			}
		}
	}
	if seen[ok] != 2 || seen[denied] != 2 {
		t.Fatalf("results per group %v, want 2 partitions each\n%s", seen, r)
	}
	if got := e.offsets(denied); len(got) != 0 {
		t.Errorf("denied group %s has commits: %v", denied, got)
	}
	if got, w := e.st.DescribeOffsets(t, ok), want(topic, offsets); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --describe %s: %v, want %v", ok, got, w)
	}
}

// TestSecureHiddenGroup: a group the test user may not even describe (ACL) stops the run
// before anything is written, with an error naming the group and GROUP_AUTHORIZATION_FAILED.
func TestSecureHiddenGroup(t *testing.T) {
	e := newSecureEnv(t)
	e.kafkaArgs = e.userArgs(kafkaconn.MechanismPlain, e.st.PasswordFile)
	topic := e.topic(10)
	ok := e.group()
	hidden := e.st.DeniedGroupPrefix + "hidden-" + stacktest.Name(t, "g")
	e.deleteGroupAtEnd(hidden)
	e.zkOffsets(ok, topic, map[int32]int64{0: 3})
	e.zkOffsets(hidden, topic, map[int32]int64{0: 4})

	r := e.cli("migrate", "copy", "--execute", "--backup", e.file("backup"))
	if r.code != 1 || !strings.Contains(r.stderr, "GROUP_AUTHORIZATION_FAILED") || !strings.Contains(r.stderr, hidden) {
		t.Fatalf("want exit 1 and GROUP_AUTHORIZATION_FAILED naming %s, got %s", hidden, r)
	}
	t.Log(strings.TrimSpace(r.stderr))
	for _, g := range []string{ok, hidden} {
		if got := e.offsets(g); len(got) != 0 {
			t.Errorf("group %s has commits after a run that failed while planning: %v", g, got)
		}
	}
}

// TestSecureDeniedTopic: in one group, the partitions of a topic the test user may not commit
// to (ACL) fail with TOPIC_AUTHORIZATION_FAILED, the other topic's are written, exit 1.
func TestSecureDeniedTopic(t *testing.T) {
	e := newSecureEnv(t)
	e.kafkaArgs = e.userArgs(kafkaconn.MechanismSCRAMSHA512, e.st.PasswordFile)
	allowed := e.topic(10)
	denied := e.namedTopic(e.st.DeniedTopicPrefix+stacktest.Name(t, "t"), 10)
	g := e.group()
	e.zkOffsets(g, allowed, map[int32]int64{0: 5})
	e.zkOffsets(g, denied, map[int32]int64{0: 6})

	r := e.cli("migrate", "copy", "--execute", "--backup", e.file("backup"), "-o", "json")
	if r.code != 1 {
		t.Fatalf("want exit 1, got %s", r)
	}
	doc := decodeJSON[copyDoc](t, r)
	status := map[string]copier.PartitionResult{}
	for _, gr := range doc.Result.Groups {
		for _, p := range gr.Partitions {
			status[p.Topic] = p
		}
	}
	if p := status[allowed]; p.Status != copier.StatusWritten {
		t.Errorf("allowed topic %s: %s %q, want written\n%s", allowed, p.Status, p.Reason, r)
	}
	if p := status[denied]; p.Status != copier.StatusFailed || !strings.Contains(p.Reason, "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("denied topic %s: %s %q, want failed with TOPIC_AUTHORIZATION_FAILED\n%s", denied, p.Status, p.Reason, r)
	}
	if got, w := e.st.DescribeOffsets(t, g), want(allowed, map[int32]int64{0: 5}); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --describe %s: %v, want only the allowed topic %v", g, got, w)
	}
}

// TestSecureZKDigestAuth is the whole secured path at once: an offset znode readable only with
// a ZooKeeper digest identity, Kafka behind SASL_SSL. Without the identity the plan reports
// that znode as denied and blocks; with --zk-auth-file the copy writes it.
func TestSecureZKDigestAuth(t *testing.T) {
	e := newSecureEnv(t)
	e.kafkaArgs = e.userArgs(kafkaconn.MechanismPlain, e.st.PasswordFile)
	topic := e.topic(10, 10)
	g := e.group()
	offsets := map[int32]int64{0: 4, 1: 8}
	e.zkOffsets(g, topic, offsets)
	const zkUser, zkPass = "migrator", "zk-pass-0c41f7e2"
	protected := fmt.Sprintf("%s/consumers/%s/offsets/%s/1", e.chroot, g, topic)
	e.protect(t, protected, zkUser, zkPass)

	denied := e.cli("migrate", "plan")
	if denied.code != 2 || !strings.Contains(denied.stdout, "access denied (ACL)") || !strings.Contains(denied.stdout, "invalid-znode") {
		t.Fatalf("plan without the ZooKeeper identity: want exit 2 and the denied znode reported, got %s", denied)
	}
	authFile := filepath.Join(t.TempDir(), "zk-auth")
	if err := os.WriteFile(authFile, []byte("digest:"+zkUser+":"+zkPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := e.mustCLI(0, "--zk-auth-file", authFile, "migrate", "copy", "--execute", "--backup", e.file("backup"), "-o", "json")
	if n := decodeJSON[copyDoc](t, cp).Counts[copier.StatusWritten]; n != 2 {
		t.Fatalf("%d written, want 2\n%s", n, cp)
	}
	assertHidden(t, zkPass, denied, cp)
	assertHidden(t, readSecret(t, e.st.PasswordFile), denied, cp)
	if got, w := e.st.DescribeOffsets(t, g), want(topic, offsets); !maps.Equal(got, w) {
		t.Errorf("consumer-groups --describe %s: %v, want %v", g, got, w)
	}
}
