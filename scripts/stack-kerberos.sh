# shellcheck shell=bash
# The kerberos profile of scripts/stack (sourced by it): an MIT Kerberos KDC (Debian's krb5-kdc)
# on loopback with a realm of its own, and Kafka 3.9 in ZooKeeper mode whose client listener
# speaks SASL GSSAPI only, as on the Hadoop-distribution clusters where legacy consumers ran.
# Everything is made into $RUN/krb5 at start:
#   krb5.conf, kdc.conf          the realm ZK2KAFKA.TEST, its KDC on a free loopback port (TCP)
#   broker.keytab                kafka/localhost: the broker's service principal
#   client.keytab                zk2kafka@ZK2KAFKA.TEST, the test client
#   client-old.keytab            the same principal's previous key (a stale keytab)
#   other.keytab                 another principal's key (a keytab of the wrong principal)
#   gone.keytab                  the key of gone@ZK2KAFKA.TEST, a principal deleted since
# The broker's GSSAPI listener is advertised as localhost (its principal's host); a second,
# PLAINTEXT listener on 127.0.0.1 carries the inter-broker traffic and the tests' own clients.

KRB_REALM=ZK2KAFKA.TEST
KRB_CLIENT=zk2kafka

krb_tools() {
  local t
  for t in krb5kdc kdb5_util kadmin.local kinit; do
    command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] ||
      die "$t not found: the kerberos profile needs MIT Kerberos (apt-get install krb5-kdc krb5-admin-server krb5-user)"
  done
}

krb_bin() { command -v "$1" 2>/dev/null || echo "/usr/sbin/$1"; }

# krb_start KDC_PORT: the realm's database, principals, keytabs and the running KDC.
krb_start() {
  local port=$1 k="$RUN/krb5"
  krb_tools
  mkdir -p "$k"; chmod 700 "$k"
  cat >"$k/krb5.conf" <<CFG
[libdefaults]
  default_realm = $KRB_REALM
  dns_lookup_realm = false
  dns_lookup_kdc = false
  udp_preference_limit = 1
  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
  $KRB_REALM = {
    kdc = 127.0.0.1:$port
  }
[domain_realm]
  localhost = $KRB_REALM
CFG
  cat >"$k/kdc.conf" <<CFG
[kdcdefaults]
  kdc_listen = 127.0.0.1:$port
  kdc_tcp_listen = 127.0.0.1:$port
[realms]
  $KRB_REALM = {
    database_name = $k/principal
    key_stash_file = $k/stash
    acl_file = $k/kadm5.acl
    max_life = 1h
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$LOGS/kdc.log
CFG
  : >"$k/kadm5.acl"
  export KRB5_CONFIG="$k/krb5.conf" KRB5_KDC_PROFILE="$k/kdc.conf"
  {
    "$(krb_bin kdb5_util)" -r "$KRB_REALM" create -s -P "$(openssl rand -hex 16)"
    local q=("addprinc -randkey kafka/localhost@$KRB_REALM" "addprinc -randkey $KRB_CLIENT@$KRB_REALM"
      "addprinc -randkey other@$KRB_REALM" "ktadd -k $k/broker.keytab kafka/localhost@$KRB_REALM"
      "ktadd -k $k/client-old.keytab $KRB_CLIENT@$KRB_REALM" "ktadd -k $k/client.keytab $KRB_CLIENT@$KRB_REALM"
      "ktadd -k $k/other.keytab other@$KRB_REALM"
      "addprinc -randkey gone@$KRB_REALM" "ktadd -k $k/gone.keytab gone@$KRB_REALM" "delprinc -force gone@$KRB_REALM")
    local c
    for c in "${q[@]}"; do "$(krb_bin kadmin.local)" -r "$KRB_REALM" -q "$c"; done
  } >"$LOGS/kadmin.log" 2>&1 || { tail -5 "$LOGS/kadmin.log" >&2; die "creating the Kerberos realm failed (log: $LOGS/kadmin.log)"; }
  start kdc "$LOGS/kdc.out" env KRB5_CONFIG="$k/krb5.conf" KRB5_KDC_PROFILE="$k/kdc.conf" "$(krb_bin krb5kdc)" -n -r "$KRB_REALM"
  local i
  for i in $(seq 100); do
    alive kdc || { tail -5 "$LOGS/kdc.out" "$LOGS/kdc.log" >&2; die "the KDC exited during start (log: $LOGS/kdc.log)"; }
    if KRB5CCNAME="$k/probe.ccache" "$(krb_bin kinit)" -k -t "$k/client.keytab" "$KRB_CLIENT@$KRB_REALM" >/dev/null 2>&1; then
      rm -f "$k/probe.ccache"; return 0
    fi
    sleep 0.2
  done
  die "the KDC on 127.0.0.1:$port gave no ticket within 20s (log: $LOGS/kdc.log)"
}

# krb_props KAFKA_PORT INTERNAL_PORT ZK_PORT: server.properties lines.
krb_props() {
  cat <<CFG
broker.id=0
listeners=SASL_PLAINTEXT://localhost:$1,INTERNAL://127.0.0.1:$2
advertised.listeners=SASL_PLAINTEXT://localhost:$1,INTERNAL://127.0.0.1:$2
listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT
inter.broker.listener.name=INTERNAL
sasl.enabled.mechanisms=GSSAPI
sasl.kerberos.service.name=kafka
listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="$RUN/krb5/broker.keytab" principal="kafka/localhost@$KRB_REALM";
zookeeper.connect=127.0.0.1:$3/kafka
CFG
}

# krb_java_opts: the broker's JVM flags for Kerberos.
krb_java_opts() { echo "-Djava.security.krb5.conf=$RUN/krb5/krb5.conf -Dzookeeper.sasl.client=false"; }

# krb_env KDC_PORT GSSAPI_PORT: stack.env lines.
krb_env() {
  cat <<ENV
KERBEROS=1
KAFKA_GSSAPI=localhost:$2
KRB_KDC=127.0.0.1:$1
KRB_REALM=$KRB_REALM
KRB5_CONFIG=$RUN/krb5/krb5.conf
KRB_CLIENT_PRINCIPAL=$KRB_CLIENT@$KRB_REALM
KRB_CLIENT_KEYTAB=$RUN/krb5/client.keytab
KRB_OLD_KEYTAB=$RUN/krb5/client-old.keytab
KRB_OTHER_KEYTAB=$RUN/krb5/other.keytab
KRB_GONE_KEYTAB=$RUN/krb5/gone.keytab
# A shell that sources this file reaches the GSSAPI listener with its own keytab:
#   zk2kafka --kafka localhost:$2 --kafka-sasl-mechanism GSSAPI --kafka-sasl-kerberos-keytab ... --kafka-sasl-kerberos-principal ...
export KRB5_CONFIG=$RUN/krb5/krb5.conf
ENV
}
