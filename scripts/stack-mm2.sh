# shellcheck shell=bash
# The mm2 profile of scripts/stack (sourced by it): the zk layout is the source cluster (Kafka
# 3.9 in ZooKeeper mode, its ZooKeeper holding /consumers; MM2_SOURCE=kafka28, kafka21, kafka20
# or kafka11 starts that older release instead, the usual source of a move into a new cluster);
# this adds the target cluster, a Kafka 4.1 single-node KRaft broker, and MirrorMaker 2
# replicating from source to target, run as Kafka's own driver
# (org.apache.kafka.connect.mirror.MirrorMaker, connect-mirror 3.9.1, the default source
# broker's release: scripts/kafka/pom-mm2.xml).
#
# The target listens on PLAINTEXT (the tests' own clients) and on SASL_SSL (SCRAM-SHA-512 and
# PLAIN, TLS from the secure profile's generated CA: secure_files), which MirrorMaker 2 writes
# through and zk2kafka connects to in the tests (KAFKA_TARGET_SASL, with the user's
# client.properties, JKS trust store, in KAFKA_TARGET_CLIENT_PROPERTIES): the clusters that
# still hold ZooKeeper offsets replicate into secured ones.
#
# Replication is source->target only, of the topics named MM2_TOPIC_PREFIX* (the tests create
# theirs so), with the default replication policy: the target's copy of topic t is source.t.
# MirrorMaker 2 writes its offset syncs to mm2-offset-syncs.target.internal on the source (the
# default offset-syncs.topic.location) and its checkpoints to source.checkpoints.internal on the
# target. sync.group.offsets.enabled is on (every 5 s), for the path that copies into the source
# and lets MirrorMaker 2 carry the offsets: it syncs only groups with commits in the source's
# __consumer_offsets, so the groups the tests migrate from ZooKeeper into the target are not
# touched.

MM2_SOURCE_ALIAS=source
MM2_TARGET_ALIAS=target
MM2_TOPIC_PREFIX=mm2t-
# offset.lag.max: how far MirrorMaker 2 lets a partition run past its latest offset sync before
# it writes another (default 100). Small, so a test's few hundred records get several syncs.
MM2_OFFSET_LAG_MAX=10

# mm2_up SOURCE_PORT: start the target cluster and MirrorMaker 2, wait until MirrorMaker 2 made
# its offset-syncs topic on the source, and print the stack.env lines of the profile.
mm2_up() {
  local src=$1 target ctrl sasl libs="$CACHE/kafka4/libs"
  target=$(free_port "${KAFKA_TARGET_PORT:-}")
  ctrl=$(free_port "")
  sasl=$(free_port "")
  secure_files
  (umask 077; { mm2_target_props "$target" "$ctrl" "$sasl"; common_props | sed "s|^log.dirs=.*|log.dirs=$RUN/target-data|"; } >"$RUN/target.properties")
  kraft_format "$libs" "$RUN/target.properties" --add-scram "SCRAM-SHA-512=[name=$SECURE_USER,password=$(cat "$RUN/secrets/$SECURE_USER.password")]"
  start kafka-target "$LOGS/kafka-target.log" $(kafka_java) -Dlog4j2.configurationFile="$RUN/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$RUN/target.properties"
  "$CACHE/bin/stackcheck" -kafka "127.0.0.1:$target" -pid "$(cat "$RUN/kafka-target.pid")" -timeout 120s >&2 \
    || { tail -30 "$LOGS/kafka-target.log" >&2; die "target kafka on 127.0.0.1:$target not ready (log: $LOGS/kafka-target.log)"; }
  (umask 077; mm2_properties "$src" "$sasl" >"$RUN/mm2.properties")
  cp "$RUN/log4j-zookeeper.properties" "$RUN/log4j-mm2.properties"
  mm2_start "$src"
  cat <<ENV
KAFKA_TARGET=127.0.0.1:$target
KAFKA_TARGET_SASL=127.0.0.1:$sasl
KAFKA_TARGET_CLIENT_PROPERTIES=$RUN/client-jks.properties
KAFKA_TARGET_CA_FILE=$RUN/tls/ca.pem
KAFKA_TARGET_USER=$SECURE_USER
KAFKA_TARGET_PASSWORD_FILE=$RUN/secrets/$SECURE_USER.password
KAFKA_TARGET_LIBS=$libs
MM2_SOURCE_ALIAS=$MM2_SOURCE_ALIAS
MM2_TARGET_ALIAS=$MM2_TARGET_ALIAS
MM2_TOPIC_PREFIX=$MM2_TOPIC_PREFIX
MM2_OFFSET_LAG_MAX=$MM2_OFFSET_LAG_MAX
MM2_SOURCE=$(mm2_source)
MM2_LOG=$LOGS/mm2.log
MM2_LIBS=$CACHE/mm2/libs
MM2_LOG4J=$RUN/log4j-mm2.properties
ENV
}

# mm2_start SOURCE_PORT: start MirrorMaker 2 on $RUN/mm2.properties and wait until it replicates.
mm2_start() {
  start mm2 "$LOGS/mm2.log" java -Xms128m -Xmx384m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$RUN/log4j-mm2.properties" -cp "$CACHE/mm2/libs/*" \
    org.apache.kafka.connect.mirror.MirrorMaker "$RUN/mm2.properties"
  # MirrorMaker 2's source connector creates the offset-syncs topic when it starts: its
  # replication is running from then on.
  "$CACHE/bin/stackcheck" -kafka "127.0.0.1:$1" -pid "$(cat "$RUN/mm2.pid")" -timeout 180s \
    -topic "mm2-offset-syncs.$MM2_TARGET_ALIAS.internal" >&2 \
    || { tail -30 "$LOGS/mm2.log" >&2; die "MirrorMaker 2 did not start replicating (log: $LOGS/mm2.log)"; }
}

# mm2_restart DOWN: restart MirrorMaker 2 (a test stops it part way by its pid): stop it if it
# still runs, wait DOWN seconds, start it on the same configuration (scripts/stack restart mm2).
mm2_restart() {
  local n
  stop mm2
  sleep "$1"
  n=1; while [ -e "$LOGS/mm2.log.$n" ]; do n=$((n + 1)); done
  [ -e "$LOGS/mm2.log" ] && mv "$LOGS/mm2.log" "$LOGS/mm2.log.$n"
  mm2_start "$(sed -n 's/^KAFKA=127.0.0.1://p' "$RUN/stack.env")"
  echo "stack: $STACK_NAME mm2 restarted (down ${1}s)" >&2
}

# mm2_target_props PORT CONTROLLER_PORT SASL_PORT: the target broker's configuration.
mm2_target_props() {
  cat <<CFG
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2,SASL_SSL://127.0.0.1:$3
advertised.listeners=PLAINTEXT://127.0.0.1:$1,SASL_SSL://127.0.0.1:$3
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
controller.quorum.bootstrap.servers=127.0.0.1:$2
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SECURE_USER="$(cat "$RUN/secrets/$SECURE_USER.password")";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location=$RUN/tls/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$RUN/tls/ca.pem
CFG
}

# mm2_properties SOURCE_PORT TARGET_SASL_PORT: MirrorMaker 2's configuration (mm2.properties):
# it reaches the target through SASL_SSL, as the test user.
mm2_properties() {
  cat <<CFG
clusters = $MM2_SOURCE_ALIAS, $MM2_TARGET_ALIAS
$MM2_SOURCE_ALIAS.bootstrap.servers = 127.0.0.1:$1
$MM2_TARGET_ALIAS.bootstrap.servers = 127.0.0.1:$2
$MM2_TARGET_ALIAS.security.protocol = SASL_SSL
$MM2_TARGET_ALIAS.sasl.mechanism = SCRAM-SHA-512
$MM2_TARGET_ALIAS.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="$SECURE_USER" password="$(cat "$RUN/secrets/$SECURE_USER.password")";
$MM2_TARGET_ALIAS.ssl.truststore.type = PEM
$MM2_TARGET_ALIAS.ssl.truststore.location = $RUN/tls/ca.pem
$MM2_SOURCE_ALIAS->$MM2_TARGET_ALIAS.enabled = true
$MM2_TARGET_ALIAS->$MM2_SOURCE_ALIAS.enabled = false
$MM2_SOURCE_ALIAS->$MM2_TARGET_ALIAS.topics = ${MM2_TOPIC_PREFIX//./\\.}.*
# One broker per cluster.
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
# New test topics are found within seconds (default 10 minutes); checkpoints every 5 s.
refresh.topics.interval.seconds = 5
refresh.groups.interval.seconds = 5
emit.checkpoints.enabled = true
emit.checkpoints.interval.seconds = 5
sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 5
offset.lag.max = $MM2_OFFSET_LAG_MAX
# No REST server of its own: nothing to bind.
dedicated.mode.enable.internal.rest = false
CFG
}
