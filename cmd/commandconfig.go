package cmd

import (
	"fmt"

	"github.com/zk2kafka/zk2kafka/internal/clientprops"
	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// fromCommandConfig reads --command-config, a Kafka client.properties, refusing the security
// flags beside it: one connection has one source of its settings.
func (k *kafkaSecurityFlags) fromCommandConfig() (kafkaconn.Security, error) {
	for name, set := range map[string]bool{
		"--kafka-tls": k.tls, "--kafka-tls-ca-file": k.caFile != "", "--kafka-tls-cert-file": k.certFile != "", "--kafka-tls-key-file": k.keyFile != "",
		"--kafka-tls-server-name": k.serverName != "", "--kafka-tls-insecure-skip-verify": k.insecureSkipVerify,
		"--kafka-sasl-mechanism": k.mechanism != "", "--kafka-sasl-user": k.user != "", "--kafka-sasl-password-file": k.passwordFile != "",
		"--kafka-sasl-kerberos-principal": k.krbPrincipal != "", "--kafka-sasl-kerberos-keytab": k.krbKeytab != "",
		"--kafka-sasl-kerberos-ccache": k.krbCCache != "", "--kafka-sasl-kerberos-service-name": k.krbService != "",
		"--kafka-sasl-oauth-token-url": k.oauthTokenURL != "", "--kafka-sasl-oauth-client-id": k.oauthClientID != "",
		"--kafka-sasl-oauth-client-secret-file": k.oauthSecretFile != "", "--kafka-sasl-oauth-scope": k.oauthScope != "",
	} {
		if set {
			return kafkaconn.Security{}, fmt.Errorf("%s and --command-config are exclusive: the file holds every Kafka security setting", name)
		}
	}
	c, err := clientprops.KafkaClient(k.commandConfig)
	if err != nil {
		return kafkaconn.Security{}, err
	}
	// krb5.conf is not a client.properties key (Java takes it from java.security.krb5.conf).
	if k.krbConfig != "" && c.Security.Mechanism != kafkaconn.MechanismGSSAPI {
		return kafkaconn.Security{}, fmt.Errorf("--kafka-sasl-kerberos-config is for GSSAPI, and --command-config %s sets sasl.mechanism %q", k.commandConfig, c.Security.Mechanism)
	}
	c.Security.Kerberos.ConfigFile = k.krbConfig
	if err := c.Security.Validate(); err != nil {
		return c.Security, fmt.Errorf("--command-config %s: %w", k.commandConfig, err)
	}
	k.fileClientID = c.ClientID
	return c.Security, nil
}
