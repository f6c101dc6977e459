package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// envSASLPassword holds the Kafka SASL password. There is deliberately no --kafka-sasl-password
// flag: a flag value lands in shell history and in `ps` output. The target cluster's is
// ZK2KAFKA_TARGET_KAFKA_SASL_PASSWORD (kafkaSecurityFlags.env), and the OAUTHBEARER client
// secrets are ZK2KAFKA_[TARGET_]KAFKA_SASL_OAUTH_CLIENT_SECRET, without a flag either.
const envSASLPassword = envPrefix + "_KAFKA_SASL_PASSWORD"

// passwordKey is the config-file key people will try; it gets its own message.
const passwordKey = "kafka-sasl-password"

// kafkaSecurityFlags are the TLS and SASL settings of the Kafka connection.
type kafkaSecurityFlags struct {
	tls                bool
	caFile             string
	certFile           string
	keyFile            string
	serverName         string
	insecureSkipVerify bool
	mechanism          string
	user               string
	passwordFile       string
	// GSSAPI
	krbPrincipal, krbKeytab, krbCCache, krbConfig, krbService string
	// OAUTHBEARER
	oauthTokenURL, oauthClientID, oauthSecretFile, oauthScope string
	// commandConfig is a Kafka client.properties holding all of the above (command-config.go).
	commandConfig string
	fileClientID  string // client.id of the command config, when it sets one
	// prefix names the cluster's flags: "" for --kafka's (the cluster the znodes refer to),
	// "target-" for --target-kafka's (a cluster MirrorMaker 2 replicates into).
	prefix string
}

// flag is the command-line name of one of the cluster's settings: "--" + prefix + name.
func (k *kafkaSecurityFlags) flag(name string) string { return "--" + k.prefix + name }

// env is the environment variable of a secret of the cluster: ZK2KAFKA_[TARGET_]KAFKA_<name>.
func (k *kafkaSecurityFlags) env(name string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(k.prefix, "-", "_")) + "KAFKA_" + name
}

func (k *kafkaSecurityFlags) addFlags(f *pflag.FlagSet) {
	p := k.prefix
	f.BoolVar(&k.tls, p+"kafka-tls", false, "connect to Kafka over TLS")
	f.StringVar(&k.caFile, p+"kafka-tls-ca-file", "", "PEM file of the CAs that sign the brokers' certificates (default: the system's)")
	f.StringVar(&k.certFile, p+"kafka-tls-cert-file", "", "PEM client certificate for mutual TLS (with "+k.flag("kafka-tls-key-file")+")")
	f.StringVar(&k.keyFile, p+"kafka-tls-key-file", "", "PEM client private key for mutual TLS (with "+k.flag("kafka-tls-cert-file")+")")
	f.StringVar(&k.serverName, p+"kafka-tls-server-name", "", "name to check the brokers' certificates against (default: the host dialled)")
	f.BoolVar(&k.insecureSkipVerify, p+"kafka-tls-insecure-skip-verify", false,
		"accept ANY broker certificate (no protection against impersonation; command line only, warns on every run)")
	f.StringVar(&k.mechanism, p+"kafka-sasl-mechanism", "", "SASL mechanism: "+strings.Join(kafkaconn.Mechanisms(), ", "))
	f.StringVar(&k.user, p+"kafka-sasl-user", "", "SASL user")
	f.StringVar(&k.passwordFile, p+"kafka-sasl-password-file", "",
		"file holding the SASL password (or set "+k.env("SASL_PASSWORD")+"; there is no password flag)")
	f.StringVar(&k.krbPrincipal, p+"kafka-sasl-kerberos-principal", "", "GSSAPI: the client principal, user@REALM (with the ticket cache: default the cache's)")
	f.StringVar(&k.krbKeytab, p+"kafka-sasl-kerberos-keytab", "", "GSSAPI: log in with this keytab (default: the ticket cache kinit filled)")
	f.StringVar(&k.krbCCache, p+"kafka-sasl-kerberos-ccache", "", "GSSAPI: the ticket cache file (default $KRB5CCNAME or /tmp/krb5cc_<uid>)")
	f.StringVar(&k.krbConfig, p+"kafka-sasl-kerberos-config", "", "GSSAPI: krb5.conf (default $KRB5_CONFIG or /etc/krb5.conf)")
	f.StringVar(&k.krbService, p+"kafka-sasl-kerberos-service-name", "", "GSSAPI: the brokers' service principal name, as sasl.kerberos.service.name (default kafka)")
	f.StringVar(&k.oauthTokenURL, p+"kafka-sasl-oauth-token-url", "", "OAUTHBEARER: the OIDC token endpoint (client credentials)")
	f.StringVar(&k.oauthClientID, p+"kafka-sasl-oauth-client-id", "", "OAUTHBEARER: the client id")
	f.StringVar(&k.oauthSecretFile, p+"kafka-sasl-oauth-client-secret-file", "", "OAUTHBEARER: file holding the client secret (or set "+k.env("SASL_OAUTH_CLIENT_SECRET")+"; there is no secret flag)")
	f.StringVar(&k.oauthScope, p+"kafka-sasl-oauth-scope", "", "OAUTHBEARER: the scope to ask for (space-separated)")
	f.StringVar(&k.commandConfig, p+"command-config", "", "Kafka client.properties, as kafka-consumer-groups --command-config takes it (security.protocol, sasl.*, ssl.* with "+
		"JKS, PKCS12 or PEM stores, client.id); instead of the "+k.flag("kafka-tls")+" and "+k.flag("kafka-sasl")+" flags")
}

// security checks the settings and reads the password; it makes no network call. getenv is
// os.Getenv outside tests.
func (k *kafkaSecurityFlags) security(getenv func(string) string) (kafkaconn.Security, error) {
	if k.commandConfig != "" {
		return k.fromCommandConfig()
	}
	s := kafkaconn.Security{
		TLS: k.tls, CAFile: k.caFile, CertFile: k.certFile, KeyFile: k.keyFile, ServerName: k.serverName,
		InsecureSkipVerify: k.insecureSkipVerify,
		Mechanism:          kafkaconn.NormalizeMechanism(k.mechanism), User: k.user,
	}
	switch s.Mechanism {
	case kafkaconn.MechanismGSSAPI:
		s.Kerberos = kafkaconn.Kerberos{Principal: k.krbPrincipal, KeytabFile: k.krbKeytab, CCacheFile: k.krbCCache, ConfigFile: k.krbConfig, ServiceName: k.krbService}
		return s, k.onlyFor(s, s.Validate())
	case kafkaconn.MechanismOAuthBearer:
		secret, err := readSecretFlag(k.flag("kafka-sasl-oauth-client-secret-file"), k.oauthSecretFile, k.env("SASL_OAUTH_CLIENT_SECRET"), getenv)
		if err != nil {
			return s, err
		}
		s.OAuth = kafkaconn.OAuth{TokenURL: k.oauthTokenURL, ClientID: k.oauthClientID, ClientSecret: secret, Scope: k.oauthScope}
		return s, k.onlyFor(s, s.Validate())
	}
	if err := k.onlyFor(s, nil); err != nil {
		return s, err
	}
	env := getenv(k.env("SASL_PASSWORD"))
	switch {
	case env != "" && k.passwordFile != "":
		return s, fmt.Errorf("kafka SASL password: both %s and %s are set: give it one way", k.env("SASL_PASSWORD"), k.flag("kafka-sasl-password-file"))
	case k.passwordFile != "":
		b, err := os.ReadFile(k.passwordFile)
		if err != nil {
			// The error names the file, never its content.
			return s, fmt.Errorf("%s: %w", k.flag("kafka-sasl-password-file"), err)
		}
		// A trailing newline is what editors and `echo` add, never part of the password.
		s.Password = kafkaconn.Secret(strings.TrimRight(string(b), "\r\n"))
		if s.Password == "" {
			return s, fmt.Errorf("%s %s is empty", k.flag("kafka-sasl-password-file"), k.passwordFile)
		}
	default:
		s.Password = kafkaconn.Secret(env)
	}
	if s.Mechanism == "" && s.Password != "" && k.user == "" {
		// A password left in the environment for another tool is no reason to refuse a run
		// that asks for no SASL at all.
		s.Password = ""
	}
	if err := s.Validate(); err != nil {
		return s, err
	}
	return s, nil
}

// checkPasswordKey refuses a password in a config file: files get copied, committed and shared.
func checkPasswordKey(key, file string) error {
	for _, k := range []kafkaSecurityFlags{{}, {prefix: targetPrefix}} {
		if key == k.prefix+passwordKey {
			return errors.New("config file " + file + ": " + key + " is never read from a file: set " +
				k.env("SASL_PASSWORD") + " or point " + key + "-file at a file readable only by you")
		}
	}
	return nil
}

// onlyFor refuses the Kerberos and OAuth flags with another mechanism than theirs: a login
// setting that is silently unused hides a mistake. err, when set, is returned as it is.
func (k *kafkaSecurityFlags) onlyFor(s kafkaconn.Security, err error) error {
	if err != nil {
		return err
	}
	groups := map[string]map[string]bool{
		kafkaconn.MechanismGSSAPI: {k.flag("kafka-sasl-kerberos-principal"): k.krbPrincipal != "", k.flag("kafka-sasl-kerberos-keytab"): k.krbKeytab != "",
			k.flag("kafka-sasl-kerberos-ccache"): k.krbCCache != "", k.flag("kafka-sasl-kerberos-config"): k.krbConfig != "", k.flag("kafka-sasl-kerberos-service-name"): k.krbService != ""},
		kafkaconn.MechanismOAuthBearer: {k.flag("kafka-sasl-oauth-token-url"): k.oauthTokenURL != "", k.flag("kafka-sasl-oauth-client-id"): k.oauthClientID != "",
			k.flag("kafka-sasl-oauth-client-secret-file"): k.oauthSecretFile != "", k.flag("kafka-sasl-oauth-scope"): k.oauthScope != ""},
	}
	for mech, flags := range groups {
		if mech == s.Mechanism {
			continue
		}
		for name, set := range flags {
			if set {
				return fmt.Errorf("%s is for %s %s", name, k.flag("kafka-sasl-mechanism"), mech)
			}
		}
	}
	if s.Mechanism == kafkaconn.MechanismGSSAPI || s.Mechanism == kafkaconn.MechanismOAuthBearer {
		if k.user != "" || k.passwordFile != "" {
			return fmt.Errorf("%s and %s are for %s, not %s", k.flag("kafka-sasl-user"), k.flag("kafka-sasl-password-file"), strings.Join(kafkaconn.PasswordMechanisms(), ", "), s.Mechanism)
		}
	}
	return nil
}

// readSecretFlag reads a secret from its file flag or its environment variable (one of them).
func readSecretFlag(flag, file, env string, getenv func(string) string) (kafkaconn.Secret, error) {
	v := getenv(env)
	switch {
	case v != "" && file != "":
		return "", fmt.Errorf("both %s and %s are set: give the secret one way", env, flag)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flag, err)
		}
		v = strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("%s %s is empty", flag, file)
		}
	}
	return kafkaconn.Secret(v), nil
}
