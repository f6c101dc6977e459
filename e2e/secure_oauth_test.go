package e2e_test

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const envOAuthSecret = "ZK2KAFKA_KAFKA_SASL_OAUTH_CLIENT_SECRET"

// oauthArgs are the OAUTHBEARER flags of client id; the secret comes from secretFile or, when it
// is empty, the environment.
func (e *env) oauthArgs(client, secretFile string) []string {
	args := []string{"--kafka-tls", "--kafka-tls-ca-file", e.st.CAFile, "--kafka-sasl-mechanism", "OAUTHBEARER",
		"--kafka-sasl-oauth-token-url", e.st.OAuthTokenURL, "--kafka-sasl-oauth-client-id", client, "--kafka-sasl-oauth-scope", "kafka"}
	if secretFile != "" {
		args = append(args, "--kafka-sasl-oauth-client-secret-file", secretFile)
	}
	return args
}

// issued lists the times the identity provider issued client a token.
func (e *env) issued(client string) []time.Time {
	e.t.Helper()
	f, err := os.Open(e.st.OAuthIssuedFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, at, _ := strings.Cut(sc.Text(), " ")
		if sec, err := strconv.ParseInt(at, 10, 64); err == nil && id == client {
			out = append(out, time.Unix(sec, 0))
		}
	}
	return out
}

// TestSecureOAuth: OAUTHBEARER with client-credential tokens from a real token endpoint, which
// Kafka validates itself against the endpoint's JWKS: plan, copy and verify with the flags (the
// secret from the environment) and with a client.properties that Kafka's consumer-groups tool
// reads unchanged; then a dual-commit that outlives its first tokens (15 s, connections
// re-authenticated every 10 s) still mirrors.
func TestSecureOAuth(t *testing.T) {
	e := newSecureEnv(t)
	secret := readSecret(t, e.st.OAuthSecretFile)
	t.Setenv(envOAuthSecret, secret)
	topic := e.topic(10, 10)
	g, g2 := e.group(), e.group()
	offsets := map[int32]int64{0: 5, 1: 7}
	e.zkOffsets(g, topic, offsets)
	e.zkOffsets(g2, topic, offsets)
	e.kafkaArgs = e.oauthArgs(e.st.OAuthClientID, "")
	plan := e.file("plan")
	runs := []result{e.mustCLI(0, "--debug", "migrate", "plan", "--group", g, "--out", plan)}
	runs = append(runs, e.mustCLI(0, "--debug", "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup")),
		e.mustCLI(0, "migrate", "verify", "--group", g))
	e.kafkaArgs = []string{"--command-config", e.st.ClientPropertiesOAuth}
	t.Setenv(envOAuthSecret, "") // the file holds the secret: the environment must not be needed
	runs = append(runs, e.mustCLI(0, "--debug", "migrate", "copy", "--group", g2, "--execute", "--backup", e.file("backup2")))
	assertHidden(t, secret, runs...)
	for _, grp := range []string{g, g2} {
		if got, w := e.st.DescribeOffsetsWith(t, grp, e.st.Kafka, e.st.ClientPropertiesOAuth), want(topic, offsets); !maps.Equal(got, w) {
			t.Errorf("consumer-groups over OAUTHBEARER --describe %s: %v, want %v", grp, got, w)
		}
	}

	// dual-commit past the lifetime of its first token.
	start := time.Now().Truncate(time.Second)
	run := e.dualCommit("--group", g, "--execute")
	e.zkOffsets(g, topic, map[int32]int64{0: 6})
	waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", e.offsets(g), run.stderr) }, func() bool { return e.offsets(g)[topic+"/0"] == 6 })
	var first time.Time
	waitFor(t, func() string { return fmt.Sprintf("tokens issued since %s: %v", start, e.issued(e.st.OAuthClientID)) }, func() bool {
		var since []time.Time
		for _, at := range e.issued(e.st.OAuthClientID) {
			if !at.Before(start) {
				since = append(since, at)
			}
		}
		if len(since) == 0 {
			return false
		}
		first = since[0]
		// A token issued once the first had expired: the run renewed its login in flight.
		return since[len(since)-1].After(first.Add(15 * time.Second))
	})
	e.zkOffsets(g, topic, map[int32]int64{0: 8})
	waitFor(t, func() string { return fmt.Sprintf("Kafka %v\n%s", e.offsets(g), run.stderr) }, func() bool { return e.offsets(g)[topic+"/0"] == 8 })
	if code := run.stop(t); code != 0 {
		t.Errorf("dual-commit over OAUTHBEARER: exit %d\n%s", code, run.stderr)
	}
}

// TestSecureOAuthRefused: a token Kafka rejects (signed by a key its JWKS does not hold), a
// token that expired already and a wrong client secret are each one clear error, nothing
// written, the secret never shown.
func TestSecureOAuthRefused(t *testing.T) {
	e := newSecureEnv(t)
	topic := e.topic(5)
	g := e.group()
	e.zkOffsets(g, topic, map[int32]int64{0: 2})
	cases := []struct {
		name, client, secretFile string
		want                     []string
	}{
		{"a token Kafka rejects", "stranger", e.st.OAuthStrangerSecretFile, []string{"refused the OAUTHBEARER token", `client "stranger"`}},
		{"an expired token", "expired", e.st.OAuthExpiredSecretFile, []string{"expired at", `client "expired"`}},
		{"a wrong secret", e.st.OAuthClientID, e.st.OAuthStrangerSecretFile, []string{"refused client", e.st.OAuthTokenURL}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.sub(t)
			s.kafkaArgs = s.oauthArgs(c.client, c.secretFile)
			r := s.cli("migrate", "copy", "--group", g, "--execute", "--backup", s.file("backup"))
			s.checkRefused(r, g, c.want, readSecret(t, c.secretFile))
		})
	}
}
