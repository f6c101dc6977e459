// Package stacktest gives integration tests the real local stack (ZooKeeper + Kafka started by
// scripts/stack): a running one named by ZK2KAFKA_STACK_ENV, or one started for this test binary.
package stacktest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvFile names a stack.env written by `scripts/stack up`: tests reuse that stack.
const EnvFile = "ZK2KAFKA_STACK_ENV"

// EnvProfile picks the profile (zk or kraft) of a stack this package starts itself.
const EnvProfile = "ZK2KAFKA_TEST_PROFILE"

// Stack is a running local stack.
type Stack struct {
	Profile   string // "zk" (Kafka 3.9, ZooKeeper mode) or "kraft" (Kafka 4.x)
	ZK        string // ZooKeeper host:port holding /consumers
	Kafka     string // Kafka bootstrap host:port
	KafkaLibs string // folder of the Kafka jars, for Kafka's own tools
	Logs      string
	// ConsumerGroupsClass is the main class of Kafka's consumer-groups tool in KafkaLibs (it
	// moved in 3.8).
	ConsumerGroupsClass string
	// KafkaRelease is the broker's release, e.g. "0.10.2.2" (scripts/stack's KAFKA_RELEASE):
	// what tells the options its tools of that release know.
	KafkaRelease string
	Dir          string // the stack's run folder (stack.env, pid files)

	// Secure is set by the secure profile: Kafka listens only on SASL_SSL (see scripts/stack).
	Secure      bool
	CAFile      string // PEM CA that signed the broker's certificate
	OtherCAFile string // an unrelated CA, for wrong-CA tests
	// KafkaMTLS is a second SASL_SSL listener that also requires a client certificate from
	// CAFile's CA. ClientCert/KeyFile is one; OtherClient* is one from OtherCAFile's CA.
	KafkaMTLS                               string
	ClientCertFile, ClientKeyFile           string
	OtherClientCertFile, OtherClientKeyFile string
	User                                    string // the test user (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), ACL-limited
	PasswordFile                            string
	AdminUser                               string // a super user (PLAIN)
	AdminPasswordFile                       string
	ClientProperties                        string // Java client config (admin over SASL_SSL) for Kafka's own tools
	DeniedGroupPrefix                       string // the test user may not commit to groups named so
	DeniedTopicPrefix                       string // nor to partitions of topics named so
	// ZKTLS is a second ZooKeeper listening on a TLS secureClientPort only, requiring a client
	// certificate from CAFile's CA; ZKTLSConfigFile its client settings in Kafka's
	// zookeeper.ssl.* names (JKS trust store, PKCS12 key store).
	// ZKLibs holds ZooKeeper's and Kafka 3.9's jars, whose zookeeper-shell (with Kafka's
	// -zk-tls-config-file) is an independent checker over TLS.
	ZKTLS, ZKTLSConfigFile, ZKLibs string
	// ClientPropertiesJKS and ClientPropertiesP12 are the test user's client.properties:
	// SCRAM-SHA-512 with a JKS trust store (for Kafka), PLAIN with PKCS12 trust and key stores
	// (for KafkaMTLS).
	ClientPropertiesJKS, ClientPropertiesP12 string
	// The identity provider of the secure profile (scripts/oidc): OAuthTokenURL issues
	// OAuthClientID's 15 s tokens for the secret in OAuthSecretFile; the expired client's tokens
	// expired already, the stranger's are for another audience. OAuthIssuedFile has a line per
	// token issued. ClientPropertiesOAuth logs in as OAuthClientID; ToolJVMOpts are the JVM
	// flags Kafka's tools need for it (the allowed OIDC URLs).
	OAuthTokenURL, OAuthClientID, OAuthSecretFile, OAuthExpiredSecretFile string
	OAuthStrangerSecretFile, OAuthIssuedFile, ClientPropertiesOAuth       string
	ToolJVMOpts                                                           []string

	// Kerberos is set by the kerberos profile: Kafka (3.9, ZooKeeper mode) also listens on
	// KafkaGSSAPI with SASL GSSAPI only; Kafka is its PLAINTEXT listener for the tests' own
	// clients. The realm's KDC is KRBKDC, its krb5.conf KRB5Config; ClientPrincipal's key is in
	// ClientKeytab (OldKeytab: its previous key; OtherKeytab: another principal's; GoneKeytab:
	// the key of a principal deleted since).
	Kerberos                                         bool
	KafkaGSSAPI, KRBKDC, KRB5Config, ClientPrincipal string
	ClientKeytab, OldKeytab, OtherKeytab, GoneKeytab string

	// MirrorMaker 2 is set by the mm2 profile: the zk layout is the source cluster (Kafka),
	// KafkaTarget a Kafka 4.x KRaft cluster MirrorMaker 2 replicates the topics named
	// MM2TopicPrefix* into, from alias MM2SourceAlias to MM2TargetAlias, with offset.lag.max
	// MM2OffsetLagMax; MM2Log is its log. MM2Libs holds MirrorMaker 2's jars and MM2Log4j its
	// log4j configuration, for a test that runs a replication of its own.
	MirrorMaker2                                bool
	KafkaTarget, MM2SourceAlias, MM2TargetAlias string
	MM2TopicPrefix, MM2Log                      string
	MM2Libs, MM2Log4j                           string
	MM2OffsetLagMax                             int64
	// KafkaTargetSASL is the target's SASL_SSL listener (SCRAM-SHA-512 and PLAIN for
	// KafkaTargetUser, whose password is in KafkaTargetPasswordFile; TLS signed by
	// KafkaTargetCAFile), which MirrorMaker 2 writes through; KafkaTargetClientProperties is the
	// user's client.properties for it (SCRAM-SHA-512, a JKS trust store).
	KafkaTargetSASL, KafkaTargetClientProperties                string
	KafkaTargetCAFile, KafkaTargetUser, KafkaTargetPasswordFile string

	started string // STACK_NAME when this package started the stack
}

// shared is the one stack of this test binary. It is package state on purpose: starting a
// stack costs seconds, so every test of a package shares one, stopped by Main.
var shared struct {
	once  sync.Once
	stack *Stack
	err   error
}

// Get returns the stack, starting it on first use unless ZK2KAFKA_STACK_ENV names one.
// Under `go test -short` it skips the test: integration tests need the real stack. On the
// secure profile it skips too: these tests connect in plaintext (GetSecure is for that one).
func Get(t testing.TB) *Stack {
	t.Helper()
	s := get(t)
	if s.Secure {
		t.Skip("plaintext integration test: the stack is the secure profile (SASL_SSL only)")
	}
	if s.Kerberos {
		t.Skip("plaintext integration test: the stack is the kerberos profile (its tests are TestKerberos*)")
	}
	return s
}

// GetKerberos returns the stack if it is the kerberos profile and skips the test otherwise.
// It starts a stack only when ZK2KAFKA_TEST_PROFILE=kerberos.
func GetKerberos(t testing.TB) *Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the real stack (run without -short)")
	}
	if os.Getenv(EnvFile) == "" && os.Getenv(EnvProfile) != "kerberos" {
		t.Skip("Kerberos test: needs the kerberos stack (ZK2KAFKA_STACK_ENV of `scripts/stack up kerberos`)")
	}
	s := get(t)
	if !s.Kerberos {
		t.Skipf("Kerberos test: the stack is the %s profile, not kerberos", s.Profile)
	}
	return s
}

// GetMirrorMaker2 returns the stack if it is the mm2 profile and skips the test otherwise. It
// starts a stack only when ZK2KAFKA_TEST_PROFILE=mm2.
func GetMirrorMaker2(t testing.TB) *Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the real stack (run without -short)")
	}
	if os.Getenv(EnvFile) == "" && os.Getenv(EnvProfile) != "mm2" {
		t.Skip("MirrorMaker 2 test: needs the mm2 stack (ZK2KAFKA_STACK_ENV of `scripts/stack up mm2`)")
	}
	s := get(t)
	if !s.MirrorMaker2 {
		t.Skipf("MirrorMaker 2 test: the stack is the %s profile, not mm2", s.Profile)
	}
	return s
}

// GetSecure returns the stack if it is the secure profile and skips the test otherwise. It
// starts a stack only when ZK2KAFKA_TEST_PROFILE=secure.
func GetSecure(t testing.TB) *Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the real stack (run without -short)")
	}
	if os.Getenv(EnvFile) == "" && os.Getenv(EnvProfile) != "secure" {
		t.Skip("security test: needs the secure stack (ZK2KAFKA_STACK_ENV of `scripts/stack up secure`)")
	}
	s := get(t)
	if !s.Secure {
		t.Skipf("security test: the stack is the %s profile, not secure", s.Profile)
	}
	return s
}

func get(t testing.TB) *Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the real stack (run without -short)")
	}
	shared.once.Do(func() { shared.stack, shared.err = open() })
	if shared.err != nil {
		t.Fatalf("local stack: %v", shared.err)
	}
	return shared.stack
}

// Main runs the tests and then stops a stack this binary started. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if s := shared.stack; s != nil && s.started != "" {
		if err := s.run("down"); err != nil {
			fmt.Fprintf(os.Stderr, "stacktest: stopping stack %s: %v\n", s.started, err)
		}
	}
	return code
}

func open() (*Stack, error) {
	if path := os.Getenv(EnvFile); path != "" {
		return readEnv(path)
	}
	profile := os.Getenv(EnvProfile)
	if profile == "" {
		profile = "zk"
	}
	s := &Stack{Profile: profile, started: fmt.Sprintf("gotest-%d", os.Getpid())}
	if err := s.run("up"); err != nil {
		return nil, err
	}
	st, err := readEnv(filepath.Join(RepoRoot(), ".stack", "run", s.started, "stack.env"))
	if err != nil {
		return nil, err
	}
	st.started = s.started
	return st, nil
}

func (s *Stack) run(verb string) error {
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "stack"), verb, s.Profile)
	cmd.Env = append(os.Environ(), "STACK_NAME="+s.started)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("scripts/stack %s %s: %w\n%s", verb, s.Profile, err, out)
	}
	return nil
}

func readEnv(path string) (*Stack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s (from %s): %w", path, EnvFile, err)
	}
	defer f.Close()
	vals := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "export NAME=value" lines are for a shell that sources the file (scripts/demo, a
		// developer); the tests read the plain ones.
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "export ") {
			vals[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s := &Stack{Profile: vals["PROFILE"], ZK: vals["ZK"], Kafka: vals["KAFKA"], KafkaLibs: vals["KAFKA_LIBS"], Logs: vals["LOGS"], Dir: filepath.Dir(path), ConsumerGroupsClass: vals["CONSUMER_GROUPS_CLASS"],
		KafkaRelease: vals["KAFKA_RELEASE"],
		Secure:       vals["SECURE"] == "1", CAFile: vals["KAFKA_CA_FILE"], OtherCAFile: vals["KAFKA_OTHER_CA_FILE"],
		KafkaMTLS: vals["KAFKA_MTLS"], ClientCertFile: vals["KAFKA_CLIENT_CERT_FILE"], ClientKeyFile: vals["KAFKA_CLIENT_KEY_FILE"],
		OtherClientCertFile: vals["KAFKA_OTHER_CLIENT_CERT_FILE"], OtherClientKeyFile: vals["KAFKA_OTHER_CLIENT_KEY_FILE"],
		User: vals["KAFKA_USER"], PasswordFile: vals["KAFKA_PASSWORD_FILE"],
		AdminUser: vals["KAFKA_ADMIN_USER"], AdminPasswordFile: vals["KAFKA_ADMIN_PASSWORD_FILE"],
		ClientProperties: vals["KAFKA_CLIENT_PROPERTIES"], DeniedGroupPrefix: vals["KAFKA_DENIED_GROUP_PREFIX"],
		DeniedTopicPrefix: vals["KAFKA_DENIED_TOPIC_PREFIX"], ZKTLS: vals["ZK_TLS"], ZKTLSConfigFile: vals["ZK_TLS_CONFIG_FILE"], ZKLibs: vals["ZK_LIBS"],
		ClientPropertiesJKS: vals["KAFKA_CLIENT_PROPERTIES_JKS"], ClientPropertiesP12: vals["KAFKA_CLIENT_PROPERTIES_P12"],
		OAuthTokenURL: vals["OAUTH_TOKEN_URL"], OAuthClientID: vals["OAUTH_CLIENT_ID"], OAuthSecretFile: vals["OAUTH_CLIENT_SECRET_FILE"],
		OAuthExpiredSecretFile: vals["OAUTH_EXPIRED_SECRET_FILE"], OAuthStrangerSecretFile: vals["OAUTH_STRANGER_SECRET_FILE"],
		OAuthIssuedFile: vals["OAUTH_ISSUED_FILE"], ClientPropertiesOAuth: vals["KAFKA_CLIENT_PROPERTIES_OAUTH"],
		ToolJVMOpts: strings.Fields(vals["KAFKA_TOOL_JVM_OPTS"]),
		Kerberos:    vals["KERBEROS"] == "1", KafkaGSSAPI: vals["KAFKA_GSSAPI"], KRBKDC: vals["KRB_KDC"], KRB5Config: vals["KRB5_CONFIG"],
		ClientPrincipal: vals["KRB_CLIENT_PRINCIPAL"], ClientKeytab: vals["KRB_CLIENT_KEYTAB"], OldKeytab: vals["KRB_OLD_KEYTAB"],
		OtherKeytab: vals["KRB_OTHER_KEYTAB"], GoneKeytab: vals["KRB_GONE_KEYTAB"]}
	if s.Profile == "mm2" {
		if err := s.readMirrorMaker2(vals); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.ZK == "" || s.Kafka == "" || s.KafkaLibs == "" {
		return nil, fmt.Errorf("%s lacks ZK, KAFKA or KAFKA_LIBS", path)
	}
	if s.Secure && (s.CAFile == "" || s.PasswordFile == "" || s.AdminPasswordFile == "" || s.ClientProperties == "" || s.ClientCertFile == "" || s.KafkaMTLS == "" || s.DeniedTopicPrefix == "" || s.ZKTLS == "") {
		return nil, fmt.Errorf("%s: secure profile without KAFKA_CA_FILE, KAFKA_PASSWORD_FILE, KAFKA_ADMIN_PASSWORD_FILE, "+
			"KAFKA_CLIENT_PROPERTIES, KAFKA_CLIENT_CERT_FILE, KAFKA_MTLS, KAFKA_DENIED_TOPIC_PREFIX or ZK_TLS (restart it with the current scripts/stack)", path)
	}
	return s, nil
}

// readMirrorMaker2 takes the mm2 profile's lines of stack.env.
func (s *Stack) readMirrorMaker2(vals map[string]string) error {
	s.MirrorMaker2, s.KafkaTarget, s.MM2SourceAlias, s.MM2TargetAlias = true, vals["KAFKA_TARGET"], vals["MM2_SOURCE_ALIAS"], vals["MM2_TARGET_ALIAS"]
	s.MM2TopicPrefix, s.MM2Log, s.MM2Libs, s.MM2Log4j = vals["MM2_TOPIC_PREFIX"], vals["MM2_LOG"], vals["MM2_LIBS"], vals["MM2_LOG4J"]
	s.KafkaTargetSASL, s.KafkaTargetClientProperties = vals["KAFKA_TARGET_SASL"], vals["KAFKA_TARGET_CLIENT_PROPERTIES"]
	s.KafkaTargetCAFile, s.KafkaTargetUser, s.KafkaTargetPasswordFile = vals["KAFKA_TARGET_CA_FILE"], vals["KAFKA_TARGET_USER"], vals["KAFKA_TARGET_PASSWORD_FILE"]
	lag, err := strconv.ParseInt(vals["MM2_OFFSET_LAG_MAX"], 10, 64)
	if err != nil || s.KafkaTarget == "" || s.MM2SourceAlias == "" || s.MM2TargetAlias == "" || s.MM2TopicPrefix == "" || s.MM2Libs == "" || s.MM2Log4j == "" ||
		s.KafkaTargetSASL == "" || s.KafkaTargetClientProperties == "" || s.KafkaTargetCAFile == "" || s.KafkaTargetUser == "" || s.KafkaTargetPasswordFile == "" {
		return fmt.Errorf("mm2 profile without KAFKA_TARGET, KAFKA_TARGET_SASL (and its client settings), MM2_SOURCE_ALIAS, MM2_TARGET_ALIAS, MM2_TOPIC_PREFIX, MM2_LIBS, MM2_LOG4J or a numeric MM2_OFFSET_LAG_MAX (restart it with the current scripts/stack)")
	}
	s.MM2OffsetLagMax = lag
	return nil
}

// RepoRoot is the repository's top folder, found from this source file.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Name returns a name unique to this test and run, safe as a Kafka group or topic name and as a
// znode name, so tests sharing one stack never see each other's data.
func Name(t testing.TB, prefix string) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	n := unsafeName.ReplaceAllString(t.Name(), "_")
	if len(n) > 60 {
		n = n[len(n)-60:]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, n, hex.EncodeToString(b))
}

// Private starts a stack of the shared stack's profile for t alone and stops it when t ends:
// fault tests kill and restart its processes, which would break every other test of a shared one.
func Private(t testing.TB) *Stack {
	t.Helper()
	shared := Get(t)
	s := &Stack{Profile: shared.Profile, started: Name(t, "private")}
	t.Logf("starting private stack %s (%s)", s.started, s.Profile)
	// A second try: the free port up picked can be taken before Kafka binds it (seen once, by
	// an ephemeral client port), and up stops what it started when it fails.
	err := s.run("up")
	if err != nil {
		t.Logf("private stack %s, first try: %v", s.started, err)
		err = s.run("up")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.run("down"); err != nil {
			t.Errorf("stop private stack %s: %v", s.started, err)
		}
	})
	st, rerr := readEnv(filepath.Join(RepoRoot(), ".stack", "run", s.started, "stack.env"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	st.started = s.started
	return st
}

// Restart stops one process of a private stack ("kafka" or "zookeeper"; with kill, by SIGKILL),
// keeps it down for down, and starts it again on the same ports and data (scripts/stack restart).
// It returns once the process is ready again.
func (s *Stack) Restart(service string, down time.Duration, kill bool) error {
	if s.started == "" {
		return fmt.Errorf("restart %s: only a stack this test binary started may be restarted", service)
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "stack"), "restart", s.Profile, service,
		strconv.Itoa(int(down/time.Second)))
	cmd.Env = append(os.Environ(), "STACK_NAME="+s.started)
	if kill {
		cmd.Env = append(cmd.Env, "SIGNAL=KILL")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/stack restart %s %s: %w\n%s", s.Profile, service, err, out)
	}
	return nil
}
