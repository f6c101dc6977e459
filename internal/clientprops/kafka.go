package clientprops

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/tlsconf"
)

// Kafka is what a Kafka client.properties says of the connection.
type Kafka struct {
	Security kafkaconn.Security
	ClientID string // client.id; "" when the file sets none
}

// Login modules of sasl.jaas.config, by mechanism.
var loginModules = map[string]string{
	kafkaconn.MechanismPlain:       "org.apache.kafka.common.security.plain.PlainLoginModule",
	kafkaconn.MechanismSCRAMSHA256: "org.apache.kafka.common.security.scram.ScramLoginModule",
	kafkaconn.MechanismSCRAMSHA512: "org.apache.kafka.common.security.scram.ScramLoginModule",
	kafkaconn.MechanismGSSAPI:      "com.sun.security.auth.module.Krb5LoginModule",
	kafkaconn.MechanismOAuthBearer: "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}

// callbackHandlers are the login callback handlers a file may name: Kafka's own for OIDC client
// credentials, under its 3.x (secured) and 4.x names.
var callbackHandlers = map[string]bool{
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler": true,
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler":         true,
}

// KafkaClient reads a client.properties as Kafka's consumer-groups tool takes it with
// --command-config. The passwords stay in the returned Security's secrets. The caller
// validates the Security (it may add what the file cannot say, such as krb5.conf).
func KafkaClient(path string) (Kafka, error) {
	f, err := load(path)
	if err != nil {
		return Kafka{}, fmt.Errorf("--command-config: %w", err)
	}
	var k Kafka
	s := &k.Security
	proto := strings.ToUpper(f.str("security.protocol"))
	switch proto {
	case "", "PLAINTEXT":
	case "SSL":
		s.TLS = true
	case "SASL_PLAINTEXT", "SASL_SSL":
		s.TLS = proto == "SASL_SSL"
		// Kafka's default mechanism is GSSAPI.
		s.Mechanism = kafkaconn.MechanismGSSAPI
	default:
		return k, fmt.Errorf("%s: security.protocol: %q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", path, proto)
	}
	k.ClientID = f.str("client.id")
	mech, hasMech := f.take("sasl.mechanism")
	jaas, hasJAAS := f.take("sasl.jaas.config")
	service := f.str("sasl.kerberos.service.name")
	tokenURL := f.str("sasl.oauthbearer.token.endpoint.url")
	if h := f.str("sasl.login.callback.handler.class"); h != "" && !callbackHandlers[h] {
		return k, fmt.Errorf("%s: sasl.login.callback.handler.class: %s is not Kafka's OIDC client-credentials handler, the one zk2kafka speaks", path, h)
	}
	if s.Mechanism == "" {
		if hasMech || hasJAAS {
			return k, fmt.Errorf("%s: sasl.mechanism or sasl.jaas.config is given but security.protocol %q has no SASL", path, proto)
		}
	} else {
		if hasMech {
			s.Mechanism = kafkaconn.NormalizeMechanism(mech)
		}
		if err := applyJAAS(path, s, jaas, service, tokenURL); err != nil {
			return k, err
		}
	}
	if err := sslSettings(f, s); err != nil {
		return k, err
	}
	if err := f.unknown("client.properties takes Kafka's client security names (security.protocol, sasl.*, ssl.*) and client.id"); err != nil {
		return k, err
	}
	return k, nil
}

// sslSettings reads the ssl.* keys. They are refused without TLS, as Kafka ignores them then
// and an operator who wrote them expects them used.
func sslSettings(f *file, s *kafkaconn.Security) error {
	store := func(kind string) tlsconf.Store {
		return tlsconf.Store{Setting: "ssl." + kind + ".location", Path: f.str("ssl." + kind + ".location"),
			Password: kafkaconn.Secret(f.str("ssl." + kind + ".password")), Type: f.str("ssl." + kind + ".type")}
	}
	s.TrustStore, s.KeyStore = store("truststore"), store("keystore")
	s.KeyPassword = kafkaconn.Secret(f.str("ssl.key.password"))
	if alg, ok := f.take("ssl.endpoint.identification.algorithm"); ok {
		switch strings.ToLower(alg) {
		case "":
			s.NoHostnameCheck = true
		case "https":
		default:
			return fmt.Errorf("%s: ssl.endpoint.identification.algorithm: %q is not https or empty", f.path, alg)
		}
	}
	var versions tls.Config
	if err := tlsVersions(&versions, f.path, "ssl.protocol", f.str("ssl.protocol"), "ssl.enabled.protocols", f.str("ssl.enabled.protocols")); err != nil {
		return err
	}
	s.TLSMinVersion, s.TLSMaxVersion = versions.MinVersion, versions.MaxVersion
	if !s.TLS && (s.TrustStore.Path != "" || s.KeyStore.Path != "") {
		return fmt.Errorf("%s: ssl.truststore or ssl.keystore is given but security.protocol is not SSL or SASL_SSL", f.path)
	}
	return nil
}

// applyJAAS reads the login of sasl.jaas.config for s.Mechanism.
func applyJAAS(path string, s *kafkaconn.Security, jaas, service, tokenURL string) error {
	if service != "" && s.Mechanism != kafkaconn.MechanismGSSAPI {
		return fmt.Errorf("%s: sasl.kerberos.service.name is for sasl.mechanism GSSAPI, not %s", path, s.Mechanism)
	}
	if tokenURL != "" && s.Mechanism != kafkaconn.MechanismOAuthBearer {
		return fmt.Errorf("%s: sasl.oauthbearer.token.endpoint.url is for sasl.mechanism OAUTHBEARER, not %s", path, s.Mechanism)
	}
	want, ok := loginModules[s.Mechanism]
	if !ok {
		return fmt.Errorf("%s: sasl.mechanism %q: expected one of %s", path, s.Mechanism, strings.Join(kafkaconn.Mechanisms(), ", "))
	}
	if jaas == "" {
		return fmt.Errorf("%s: sasl.mechanism %s needs sasl.jaas.config (%s required ...;)", path, s.Mechanism, want)
	}
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return fmt.Errorf("%s: sasl.jaas.config: %w", path, err)
	}
	if module != want {
		return fmt.Errorf("%s: sasl.jaas.config: login module %s does not go with sasl.mechanism %s (expected %s)", path, module, s.Mechanism, want)
	}
	take := func(k string) string { v := opts[k]; delete(opts, k); return v }
	switch s.Mechanism {
	case kafkaconn.MechanismGSSAPI:
		s.Kerberos = kafkaconn.Kerberos{Principal: take("principal"), ServiceName: service}
		useKeyTab, useCache := strings.EqualFold(take("useKeyTab"), "true"), strings.EqualFold(take("useTicketCache"), "true")
		keyTab, cache := take("keyTab"), take("ticketCache")
		take("storeKey") // the Java client keeps the key for a server; a client has no use for it
		take("debug")
		switch {
		case useKeyTab && keyTab == "":
			return fmt.Errorf("%s: sasl.jaas.config: useKeyTab=true without keyTab=", path)
		case useKeyTab:
			s.Kerberos.KeytabFile = keyTab
		case useCache:
			s.Kerberos.CCacheFile = cache
		default:
			return fmt.Errorf("%s: sasl.jaas.config: Krb5LoginModule needs useKeyTab=true keyTab=... or useTicketCache=true (zk2kafka cannot prompt for a password)", path)
		}
	case kafkaconn.MechanismOAuthBearer:
		s.OAuth = kafkaconn.OAuth{TokenURL: tokenURL, ClientID: take("clientId"), ClientSecret: kafkaconn.Secret(take("clientSecret")), Scope: take("scope")}
	default:
		s.User, s.Password = take("username"), kafkaconn.Secret(take("password"))
	}
	if len(opts) > 0 {
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		return fmt.Errorf("%s: sasl.jaas.config: %s does not take %s in zk2kafka", path, module, strings.Join(slices.Sorted(slices.Values(keys)), ", "))
	}
	return nil
}

// parseJAAS reads one JAAS login entry as Kafka writes it in sasl.jaas.config:
// `<module> required|requisite|sufficient|optional key=value key="quoted value" ... ;`.
func parseJAAS(s string) (module string, opts map[string]string, err error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return "", nil, err
	}
	if len(toks) < 2 || toks[len(toks)-1] != ";" {
		return "", nil, fmt.Errorf("expected `<LoginModule> required key=value ...;`")
	}
	toks = toks[:len(toks)-1]
	module = toks[0]
	switch strings.ToLower(toks[1]) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("after %s: %q is not a control flag (required, requisite, sufficient, optional)", module, toks[1])
	}
	opts = map[string]string{}
	for i := 2; i < len(toks); i += 3 {
		if i+2 >= len(toks) || toks[i+1] != "=" {
			return "", nil, fmt.Errorf("option %q has no =value", toks[i])
		}
		opts[toks[i]] = toks[i+2]
	}
	return module, opts, nil
}

// jaasTokens splits a JAAS entry into words, "=", ";" and quoted strings (quotes removed,
// backslash escapes kept as Java's ConfigFile reads them).
func jaasTokens(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';':
			out = append(out, string(c))
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("a quoted value is not closed")
			}
			out = append(out, b.String())
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r=;\"", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}
