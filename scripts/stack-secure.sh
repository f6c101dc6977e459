# shellcheck shell=bash
# The secure profile of scripts/stack (sourced by it): Kafka 4.1 KRaft whose only client
# listener is SASL_SSL. Everything is generated into the run folder at start:
#   tls/ca.pem          the CA clients trust (tls/other-ca.pem: an unrelated CA, for wrong-CA tests)
#   tls/broker.pem      the broker's key and certificate (SAN IP:127.0.0.1, DNS:localhost)
#   tls/client.{pem,key}        a client certificate from the CA, and one from the unrelated
#   tls/other-client.{pem,key}  CA, for the second listener (MTLS: SASL_SSL requiring a client
#                               certificate, KAFKA_MTLS in stack.env)
#   secrets/*.password  random passwords, mode 600
#   admin.properties    a Java client config (admin over SASL_SSL/PLAIN) for Kafka's own tools
#   zk-tls.properties   the TLS-only ZooKeeper's client settings in Kafka's zookeeper.ssl.* names
#                       (a JKS trust store, a PKCS12 key store: tls/zk-truststore.jks,
#                       tls/zk-client.p12), as Kafka's tools take it (--zk-tls-config-file)
# An identity provider (scripts/oidc, OAUTH_TOKEN_URL in stack.env) issues signed JWTs by the
# client credentials grant; the SASL_SSL listener also takes OAUTHBEARER and validates the tokens
# against its JWKS endpoint with Kafka's own OAuthBearerValidatorCallbackHandler, re-authenticating
# connections every 10 s. Its clients: zk2kafka (15 s tokens, so a run sees them renewed),
# expired (tokens that expired already) and stranger (tokens signed by a key the JWKS does not hold).
# A second ZooKeeper (ZK_TLS in stack.env) listens on a Netty secureClientPort only and
# requires a client certificate from tls/ca.pem: ZooKeeper over TLS as Kafka 2.5+ uses it.
# Users: admin (super user, PLAIN; also the inter-broker login) and zk2kafka (PLAIN,
# SCRAM-SHA-256 and SCRAM-SHA-512). The test user's ACLs (created by stackcheck once the broker
# is up) allow what a migration needs on every topic and group except READ (commit) on groups
# whose name starts with $SECURE_DENIED_PREFIX, and READ on topics whose name starts with
# $SECURE_DENIED_TOPIC_PREFIX.
# KRaft rather than 3.9's ZooKeeper mode: SCRAM users go in at format time (StorageTool
# --add-scram) instead of through a running ZooKeeper, and 4.x is where migrations land.

SECURE_USER=zk2kafka
SECURE_DENIED_PREFIX=denied-
SECURE_DENIED_TOPIC_PREFIX=denied-topic-

# secure_files: certificates and passwords into $RUN.
secure_files() {
  command -v openssl >/dev/null || die "openssl not found: the secure profile generates its certificates with it"
  local t="$RUN/tls" s="$RUN/secrets"
  mkdir -p "$t" "$s"; chmod 700 "$s"
  (
    cd "$t"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7 -subj "/CN=zk2kafka test CA"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 7 -subj "/CN=unrelated CA"
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n' >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.crt -days 7 -extfile broker.ext
    # Kafka's PEM key store: an unencrypted PKCS#8 key followed by the certificate chain.
    cat broker.key broker.crt ca.pem >broker.pem
    printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >client.ext
    for c in client:ca other-client:other-ca; do
      openssl req -newkey rsa:2048 -nodes -keyout "${c%%:*}.key" -out "${c%%:*}.csr" -subj "/CN=zk2kafka-client"
      openssl x509 -req -in "${c%%:*}.csr" -CA "${c#*:}.pem" -CAkey "${c#*:}.key" -CAcreateserial \
        -out "${c%%:*}.pem" -days 7 -extfile client.ext
    done
  ) >"$LOGS/openssl.log" 2>&1 || { tail -5 "$LOGS/openssl.log" >&2; die "generating certificates failed (log: $LOGS/openssl.log)"; }
  local u
  for u in admin "$SECURE_USER"; do
    (umask 077; openssl rand -hex 16 >"$s/$u.password")
  done
  cat >"$RUN/admin.properties" <<CFG
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$(cat "$s/admin.password")";
ssl.truststore.type=PEM
ssl.truststore.location=$t/ca.pem
CFG
  chmod 600 "$RUN/admin.properties"
  local zpw
  zpw=$(cat "$s/admin.password")
  (
    cd "$t"
    keytool -importcert -noprompt -alias ca -file ca.pem -keystore zk-truststore.jks -storetype JKS -storepass "$zpw"
    openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -name client -out zk-client.p12 -passout "pass:$zpw"
  ) >>"$LOGS/openssl.log" 2>&1 || { tail -5 "$LOGS/openssl.log" >&2; die "generating the ZooKeeper client stores failed (log: $LOGS/openssl.log)"; }
  cat >"$RUN/zk-tls.properties" <<CFG
zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty
zookeeper.ssl.client.enable=true
zookeeper.ssl.keystore.location=$t/zk-client.p12
zookeeper.ssl.keystore.password=$zpw
zookeeper.ssl.keystore.type=PKCS12
zookeeper.ssl.truststore.location=$t/zk-truststore.jks
zookeeper.ssl.truststore.password=$zpw
zookeeper.ssl.truststore.type=JKS
CFG
  chmod 600 "$RUN/zk-tls.properties"
  # The test user's client.properties, as Kafka's tools and zk2kafka --command-config take them:
  # SCRAM-SHA-512 with a JKS trust store, and PLAIN with PKCS12 trust and key stores (for the
  # listener that requires a client certificate).
  local upw
  upw=$(cat "$s/$SECURE_USER.password")
  keytool -importcert -noprompt -alias ca -file "$t/ca.pem" -keystore "$t/truststore.p12" -storetype PKCS12 -storepass "$zpw" \
    >>"$LOGS/openssl.log" 2>&1 || die "generating the PKCS12 trust store failed (log: $LOGS/openssl.log)"
  cat >"$RUN/client-jks.properties" <<CFG
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="$SECURE_USER" \\
    password="$upw";
ssl.truststore.type=JKS
ssl.truststore.location=$t/zk-truststore.jks
ssl.truststore.password=$zpw
client.id=zk2kafka-jks
CFG
  cat >"$RUN/client-p12.properties" <<CFG
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SECURE_USER" password="$upw";
ssl.truststore.type=PKCS12
ssl.truststore.location=$t/truststore.p12
ssl.truststore.password=$zpw
ssl.keystore.type=PKCS12
ssl.keystore.location=$t/zk-client.p12
ssl.keystore.password=$zpw
ssl.key.password=$zpw
ssl.endpoint.identification.algorithm=https
CFG
  chmod 600 "$RUN/client-jks.properties" "$RUN/client-p12.properties"
}

# start_zk_tls PORT: the TLS-only ZooKeeper (Netty, secureClientPort, client certificates
# required), ready once it answers ruok through TLS with the test client's certificate.
start_zk_tls() {
  local port=$1 name=zookeeper-tls t="$RUN/tls"
  mkdir -p "$RUN/$name-data"
  cat >"$RUN/$name.cfg" <<CFG
tickTime=2000
dataDir=$RUN/$name-data
secureClientPort=$port
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$t/broker.pem
ssl.keyStore.type=PEM
ssl.trustStore.location=$t/ca.pem
ssl.trustStore.type=PEM
ssl.clientAuth=need
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,mntr
maxClientCnxns=0
CFG
  cp "$RUN/log4j-zookeeper.properties" "$RUN/log4j-$name.properties"
  start "$name" "$LOGS/$name.log" java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError \
    -Dlog4j.configuration="file:$RUN/log4j-$name.properties" -cp "$CACHE/kafka39/libs/*" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$RUN/$name.cfg"
  for _ in $(seq 150); do
    alive "$name" || { tail -20 "$LOGS/$name.log" >&2; die "zookeeper ($name) exited during start (log: $LOGS/$name.log)"; }
    if [ "$(printf ruok | timeout 3 openssl s_client -quiet -connect "127.0.0.1:$port" -CAfile "$t/ca.pem" \
        -cert "$t/client.pem" -key "$t/client.key" 2>/dev/null)" = imok ]; then return 0; fi
    sleep 0.2
  done
  die "zookeeper ($name) on 127.0.0.1:$port did not answer ruok over TLS within 30s (log: $LOGS/$name.log)"
}

# secure_oidc PORT: the identity provider, up before the broker (which fetches its JWKS).
secure_oidc() {
  local port=$1 s="$RUN/secrets" c
  go build -tags zk2kafkadev -o "$CACHE/bin/oidc" "$ROOT/scripts/oidc" || die "could not build scripts/oidc"
  for c in zk2kafka expired stranger; do (umask 077; openssl rand -hex 16 >"$s/oauth-$c.secret"); done
  (umask 077; printf '%s %s 15s jwks\n%s %s -1m jwks\n%s %s 1h foreign\n' \
    zk2kafka "$(cat "$s/oauth-zk2kafka.secret")" expired "$(cat "$s/oauth-expired.secret")" \
    stranger "$(cat "$s/oauth-stranger.secret")" >"$s/oidc-clients")
  echo "http://127.0.0.1:$port" >"$RUN/oidc.url"
  start oidc "$LOGS/oidc.log" "$CACHE/bin/oidc" -addr "127.0.0.1:$port" -clients "$s/oidc-clients" -issued "$RUN/oidc-issued"
  local i
  for i in $(seq 100); do
    alive oidc || { tail -5 "$LOGS/oidc.log" >&2; die "the identity provider exited during start (log: $LOGS/oidc.log)"; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /jwks HTTP/1.0\r\n\r\n' >&3 && grep -q '"keys"' <&3) 2>/dev/null; then break; fi
    sleep 0.1
  done
  cat >"$RUN/client-oauth.properties" <<CFG
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler
sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:$port/token
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="zk2kafka" clientSecret="$(cat "$s/oauth-zk2kafka.secret")" scope="kafka";
ssl.truststore.type=PEM
ssl.truststore.location=$RUN/tls/ca.pem
CFG
  chmod 600 "$RUN/client-oauth.properties"
}

# secure_java_opts: the broker's and Kafka's tools' JVM flags: Kafka 4 fetches only the OIDC
# URLs it is allowed to.
secure_java_opts() {
  local u
  u=$(cat "$RUN/oidc.url")
  echo "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$u/jwks,$u/token"
}

# secure_props KAFKA_PORT CONTROLLER_PORT MTLS_PORT: server.properties lines.
secure_props() {
  local admin user
  admin=$(cat "$RUN/secrets/admin.password"); user=$(cat "$RUN/secrets/$SECURE_USER.password")
  cat <<CFG
process.roles=broker,controller
node.id=1
listeners=SASL_SSL://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2,MTLS://127.0.0.1:$3
advertised.listeners=SASL_SSL://127.0.0.1:$1,MTLS://127.0.0.1:$3
controller.listener.names=CONTROLLER
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SASL_SSL
controller.quorum.bootstrap.servers=127.0.0.1:$2
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin" user_admin="$admin" user_$SECURE_USER="$user";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=10000
# Kafka 4.1's default validator (DefaultJwtValidator, built without a key resolver) checks a
# token's claims but not its signature: BrokerJwtValidator checks it against the JWKS endpoint.
sasl.oauthbearer.jwt.validator.class=org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator
sasl.oauthbearer.jwks.endpoint.url=$(cat "$RUN/oidc.url")/jwks
sasl.oauthbearer.expected.audience=kafka
sasl.oauthbearer.expected.issuer=$(cat "$RUN/oidc.url")
listener.name.mtls.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SECURE_USER="$user";
listener.name.mtls.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.mtls.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# Only the MTLS listener requires a client certificate (from ca.pem); the principal is still
# the SASL user.
listener.name.mtls.ssl.client.auth=required
ssl.keystore.type=PEM
ssl.keystore.location=$RUN/tls/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$RUN/tls/ca.pem
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
# The controller listener is loopback PLAINTEXT, used only by this node's own broker, whose
# principal there is ANONYMOUS: it must be a super user for the cluster actions it sends.
super.users=User:admin;User:ANONYMOUS
allow.everyone.if.no.acl.found=false
CFG
}

# secure_scram_args: StorageTool arguments, one a line, creating the SCRAM credentials.
secure_scram_args() {
  local pw m
  pw=$(cat "$RUN/secrets/$SECURE_USER.password")
  for m in SCRAM-SHA-256 SCRAM-SHA-512; do
    echo --add-scram; echo "$m=[name=$SECURE_USER,password=$pw]"
  done
}

# secure_check_args: stackcheck arguments: readiness as admin through SASL_SSL, then the ACLs.
secure_check_args() {
  printf '%s\n' -tls-ca "$RUN/tls/ca.pem" -sasl-mechanism PLAIN -sasl-user admin \
    -sasl-password-file "$RUN/secrets/admin.password" -acl-user "$SECURE_USER" -acl-deny-group-prefix "$SECURE_DENIED_PREFIX" \
    -acl-deny-topic-prefix "$SECURE_DENIED_TOPIC_PREFIX"
}

# secure_env MTLS_PORT ZK_TLS_PORT: stack.env lines.
secure_env() {
  cat <<ENV
SECURE=1
ZK_TLS=127.0.0.1:$2
ZK_TLS_CONFIG_FILE=$RUN/zk-tls.properties
ZK_LIBS=$CACHE/kafka39/libs
OAUTH_TOKEN_URL=$(cat "$RUN/oidc.url")/token
OAUTH_CLIENT_ID=zk2kafka
OAUTH_CLIENT_SECRET_FILE=$RUN/secrets/oauth-zk2kafka.secret
OAUTH_EXPIRED_SECRET_FILE=$RUN/secrets/oauth-expired.secret
OAUTH_STRANGER_SECRET_FILE=$RUN/secrets/oauth-stranger.secret
OAUTH_ISSUED_FILE=$RUN/oidc-issued
KAFKA_CLIENT_PROPERTIES_OAUTH=$RUN/client-oauth.properties
KAFKA_TOOL_JVM_OPTS=$(secure_java_opts)
KAFKA_CLIENT_PROPERTIES_JKS=$RUN/client-jks.properties
KAFKA_CLIENT_PROPERTIES_P12=$RUN/client-p12.properties
KAFKA_MTLS=127.0.0.1:$1
KAFKA_CA_FILE=$RUN/tls/ca.pem
KAFKA_OTHER_CA_FILE=$RUN/tls/other-ca.pem
KAFKA_CLIENT_CERT_FILE=$RUN/tls/client.pem
KAFKA_CLIENT_KEY_FILE=$RUN/tls/client.key
KAFKA_OTHER_CLIENT_CERT_FILE=$RUN/tls/other-client.pem
KAFKA_OTHER_CLIENT_KEY_FILE=$RUN/tls/other-client.key
KAFKA_USER=$SECURE_USER
KAFKA_PASSWORD_FILE=$RUN/secrets/$SECURE_USER.password
KAFKA_ADMIN_USER=admin
KAFKA_ADMIN_PASSWORD_FILE=$RUN/secrets/admin.password
KAFKA_CLIENT_PROPERTIES=$RUN/admin.properties
KAFKA_DENIED_GROUP_PREFIX=$SECURE_DENIED_PREFIX
KAFKA_DENIED_TOPIC_PREFIX=$SECURE_DENIED_TOPIC_PREFIX
# Kafka is reachable over SASL_SSL only: a shell that sources this file takes the TLS and SASL
# settings from the config file (ZK2KAFKA_ZK and ZK2KAFKA_KAFKA, above, win over its zk and kafka).
export ZK2KAFKA_CONFIG=$RUN/zk2kafka.yaml
ENV
}

secure_yaml() {
  cat <<CFG
kafka-tls: true
kafka-tls-ca-file: $RUN/tls/ca.pem
kafka-sasl-mechanism: SCRAM-SHA-512
kafka-sasl-user: $SECURE_USER
kafka-sasl-password-file: $RUN/secrets/$SECURE_USER.password
CFG
}
