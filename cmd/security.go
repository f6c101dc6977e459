package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// envSASLPassword holds the Kafka SASL password. There is deliberately no --kafka-sasl-password
// flag: a flag value lands in shell history and in `ps` output.
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
}

func (k *kafkaSecurityFlags) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.BoolVar(&k.tls, "kafka-tls", false, "connect to Kafka over TLS")
	f.StringVar(&k.caFile, "kafka-tls-ca-file", "", "PEM file of the CAs that sign the brokers' certificates (default: the system's)")
	f.StringVar(&k.certFile, "kafka-tls-cert-file", "", "PEM client certificate for mutual TLS (with --kafka-tls-key-file)")
	f.StringVar(&k.keyFile, "kafka-tls-key-file", "", "PEM client private key for mutual TLS (with --kafka-tls-cert-file)")
	f.StringVar(&k.serverName, "kafka-tls-server-name", "", "name to check the brokers' certificates against (default: the host dialled)")
	f.BoolVar(&k.insecureSkipVerify, "kafka-tls-insecure-skip-verify", false,
		"accept ANY broker certificate (no protection against impersonation; command line only, warns on every run)")
	f.StringVar(&k.mechanism, "kafka-sasl-mechanism", "", "SASL mechanism: "+strings.Join(kafkaconn.Mechanisms(), ", "))
	f.StringVar(&k.user, "kafka-sasl-user", "", "SASL user")
	f.StringVar(&k.passwordFile, "kafka-sasl-password-file", "",
		"file holding the SASL password (or set "+envSASLPassword+"; there is no password flag)")
}

// security checks the settings and reads the password; it makes no network call. getenv is
// os.Getenv outside tests.
func (k *kafkaSecurityFlags) security(getenv func(string) string) (kafkaconn.Security, error) {
	s := kafkaconn.Security{
		TLS: k.tls, CAFile: k.caFile, CertFile: k.certFile, KeyFile: k.keyFile, ServerName: k.serverName,
		InsecureSkipVerify: k.insecureSkipVerify,
		Mechanism:          kafkaconn.NormalizeMechanism(k.mechanism), User: k.user,
	}
	env := getenv(envSASLPassword)
	switch {
	case env != "" && k.passwordFile != "":
		return s, fmt.Errorf("kafka SASL password: both %s and --kafka-sasl-password-file are set: give it one way", envSASLPassword)
	case k.passwordFile != "":
		b, err := os.ReadFile(k.passwordFile)
		if err != nil {
			// The error names the file, never its content.
			return s, fmt.Errorf("--kafka-sasl-password-file: %w", err)
		}
		// A trailing newline is what editors and `echo` add, never part of the password.
		s.Password = kafkaconn.Secret(strings.TrimRight(string(b), "\r\n"))
		if s.Password == "" {
			return s, fmt.Errorf("--kafka-sasl-password-file %s is empty", k.passwordFile)
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
	if key == passwordKey {
		return errors.New("config file " + file + ": " + passwordKey + " is never read from a file: set " +
			envSASLPassword + " or point kafka-sasl-password-file at a file readable only by you")
	}
	return nil
}
