package clientprops

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
)

// TestKafkaClient: each mechanism's sasl.jaas.config, as Kafka's documentation writes it, is
// read into the connection settings; what does not fit is refused naming the key or option,
// never showing a password.
func TestKafkaClient(t *testing.T) {
	const pw = "pa55-w0rd-xyz"
	cases := []struct {
		name    string
		body    string
		wantErr string
		check   func(*testing.T, Kafka)
	}{
		{name: "SCRAM over TLS, continuation lines", body: "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    username=\"alice\" \\\n    password=\"" + pw + "\";\nclient.id=ops\n",
			check: func(t *testing.T, k Kafka) {
				s := k.Security
				if !s.TLS || s.Mechanism != kafkaconn.MechanismSCRAMSHA512 || s.User != "alice" || s.Password.Reveal() != pw || k.ClientID != "ops" {
					t.Errorf("got %+v client.id %q", s, k.ClientID)
				}
			}},
		{name: "GSSAPI keytab, the default mechanism", body: "security.protocol=SASL_PLAINTEXT\nsasl.kerberos.service.name=kafka-svc\n" +
			`sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="/etc/security/keytabs/z.keytab" principal="z@EXAMPLE.COM";` + "\n",
			check: func(t *testing.T, k Kafka) {
				kr := k.Security.Kerberos
				if k.Security.Mechanism != kafkaconn.MechanismGSSAPI || kr.KeytabFile != "/etc/security/keytabs/z.keytab" || kr.Principal != "z@EXAMPLE.COM" || kr.ServiceName != "kafka-svc" || k.Security.TLS {
					t.Errorf("got %+v", k.Security)
				}
			}},
		{name: "GSSAPI ticket cache", body: "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;\n",
			check: func(t *testing.T, k Kafka) {
				if k.Security.Kerberos.KeytabFile != "" || k.Security.Mechanism != kafkaconn.MechanismGSSAPI {
					t.Errorf("got %+v", k.Security)
				}
			}},
		{name: "OAUTHBEARER client credentials", body: "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			"sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler\n" +
			"sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="zk2kafka" clientSecret="` + pw + `" scope="kafka";` + "\n",
			check: func(t *testing.T, k Kafka) {
				o := k.Security.OAuth
				if o.TokenURL != "https://idp.example/token" || o.ClientID != "zk2kafka" || o.ClientSecret.Reveal() != pw || o.Scope != "kafka" {
					t.Errorf("got %+v", o)
				}
			}},
		{name: "stores and no hostname check", body: "security.protocol=SSL\nssl.truststore.location=/t.jks\nssl.truststore.password=" + pw + "\nssl.endpoint.identification.algorithm=\n",
			check: func(t *testing.T, k Kafka) {
				s := k.Security
				if s.TrustStore.Path != "/t.jks" || s.TrustStore.Password.Reveal() != pw || !s.NoHostnameCheck || s.Mechanism != "" {
					t.Errorf("got %+v", s)
				}
			}},
		{name: "TLS 1.3 only", body: "security.protocol=SSL\nssl.enabled.protocols=TLSv1.3\n",
			check: func(t *testing.T, k Kafka) {
				if k.Security.TLSMinVersion != tls.VersionTLS13 {
					t.Errorf("TLS minimum %x, want TLS 1.3", k.Security.TLSMinVersion)
				}
			}},
		{name: "unknown key", body: "security.protocol=SSL\nssl.keymanager.algorithm=SunX509\n", wantErr: "ssl.keymanager.algorithm"},
		{name: "module of another mechanism", body: "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a\" password=\"" + pw + "\";\n",
			wantErr: "does not go with sasl.mechanism PLAIN"},
		{name: "unknown JAAS option", body: "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"" + pw + "\" tokenauth=true;\n",
			wantErr: "tokenauth"},
		{name: "no closing semicolon", body: "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"" + pw + "\"\n",
			wantErr: "sasl.jaas.config"},
		{name: "SASL settings without SASL", body: "security.protocol=SSL\nsasl.mechanism=PLAIN\n", wantErr: "has no SASL"},
		{name: "stores without TLS", body: "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\";\nssl.truststore.location=/t.jks\n",
			wantErr: "not SSL or SASL_SSL"},
		{name: "Kerberos password prompt", body: "security.protocol=SASL_PLAINTEXT\nsasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required principal=\"z\";\n", wantErr: "cannot prompt"},
		{name: "other protocol", body: "security.protocol=SASL_TLS\n", wantErr: "security.protocol"},
		{name: "service name with PLAIN", body: "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.kerberos.service.name=kafka\nsasl.jaas.config=x required;\n", wantErr: "sasl.kerberos.service.name is for sasl.mechanism GSSAPI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := KafkaClient(writeProps(t, c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			case err != nil && strings.Contains(err.Error(), pw):
				t.Fatalf("the error shows the password: %v", err)
			case c.check != nil:
				c.check(t, got)
			}
		})
	}
}
