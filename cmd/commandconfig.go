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
		k.flag("kafka-tls"): k.tls, k.flag("kafka-tls-ca-file"): k.caFile != "", k.flag("kafka-tls-cert-file"): k.certFile != "", k.flag("kafka-tls-key-file"): k.keyFile != "",
		k.flag("kafka-tls-server-name"): k.serverName != "", k.flag("kafka-tls-insecure-skip-verify"): k.insecureSkipVerify,
		k.flag("kafka-sasl-mechanism"): k.mechanism != "", k.flag("kafka-sasl-user"): k.user != "", k.flag("kafka-sasl-password-file"): k.passwordFile != "",
		k.flag("kafka-sasl-kerberos-principal"): k.krbPrincipal != "", k.flag("kafka-sasl-kerberos-keytab"): k.krbKeytab != "",
		k.flag("kafka-sasl-kerberos-ccache"): k.krbCCache != "", k.flag("kafka-sasl-kerberos-service-name"): k.krbService != "",
		k.flag("kafka-sasl-oauth-token-url"): k.oauthTokenURL != "", k.flag("kafka-sasl-oauth-client-id"): k.oauthClientID != "",
		k.flag("kafka-sasl-oauth-client-secret-file"): k.oauthSecretFile != "", k.flag("kafka-sasl-oauth-scope"): k.oauthScope != "",
	} {
		if set {
			return kafkaconn.Security{}, fmt.Errorf("%s and %s are exclusive: the file holds every Kafka security setting", name, k.flag("command-config"))
		}
	}
	c, err := clientprops.KafkaClient(k.commandConfig)
	if err != nil {
		return kafkaconn.Security{}, err
	}
	// krb5.conf is not a client.properties key (Java takes it from java.security.krb5.conf).
	if k.krbConfig != "" && c.Security.Mechanism != kafkaconn.MechanismGSSAPI {
		return kafkaconn.Security{}, fmt.Errorf("%s is for GSSAPI, and %s %s sets sasl.mechanism %q", k.flag("kafka-sasl-kerberos-config"), k.flag("command-config"), k.commandConfig, c.Security.Mechanism)
	}
	c.Security.Kerberos.ConfigFile = k.krbConfig
	if err := c.Security.Validate(); err != nil {
		return c.Security, fmt.Errorf("%s %s: %w", k.flag("command-config"), k.commandConfig, err)
	}
	k.fileClientID = c.ClientID
	return c.Security, nil
}
