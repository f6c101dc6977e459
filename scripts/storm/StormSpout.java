// StormSpout drives one partition of Storm's storm-kafka spout (1.x) with Storm's own classes, for
// the Storm layout's tests: ZkState is the spout's state store, PartitionManager is the per-partition
// logic of KafkaSpout (it reads the committed offset from ZooKeeper when it is created, emits
// messages it fetches from the broker, takes acks, and commit() writes the partition_<N> znode).
// Nothing here computes or writes an offset itself.
//
//   java -cp "$(scripts/storm-jars)" StormSpout ZK BROKER ZKROOT SPOUTID TOPIC PARTITION \
//        [--wildcard] [--topology ID] [--emit N] [--ack OFFSETS|all] [--commit]
//
// ZK is host:port of ZooKeeper (no chroot: storm-kafka takes servers and one port), BROKER is
// host:port of the Kafka broker. --wildcard lays the znode out as a wildcard-topic spout does
// (<zkRoot>/<spoutId>/<topic>/partition_<N>). --emit N emits up to N messages, --ack acks the
// given offsets (comma-separated) or all emitted, --commit then calls PartitionManager.commit().
// Output, one fact a line:
//   read OFFSET      where the spout resumes after reading ZooKeeper (lastCompletedOffset)
//   emitted OFFSETS  the offsets of the emitted messages, comma-separated
//   committed OFFSET the offset commit() wrote (lastCompletedOffset after the acks)
//   znode PATH DATA  the znode as ZkState reads it back
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.storm.kafka.Broker;
import org.apache.storm.kafka.DynamicPartitionConnections;
import org.apache.storm.kafka.KafkaUtils;
import org.apache.storm.kafka.Partition;
import org.apache.storm.kafka.PartitionManager;
import org.apache.storm.kafka.SpoutConfig;
import org.apache.storm.kafka.StaticHosts;
import org.apache.storm.kafka.ZkState;
import org.apache.storm.kafka.trident.GlobalPartitionInformation;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;

public class StormSpout {
    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: StormSpout ZK BROKER ZKROOT SPOUTID TOPIC PARTITION [--wildcard] [--topology ID] [--emit N] [--ack OFFSETS|all] [--commit]");
            System.exit(2);
        }
        // ZooKeeper's 3.4 client cannot canonicalize an unresolved address on Java 11+ when it
        // prepares SASL (ZOOKEEPER-3779); the test ZooKeeper has no SASL.
        System.setProperty("zookeeper.sasl.client", "false");
        String[] zk = args[0].split(":");
        Broker broker = Broker.fromString(args[1]);
        String zkRoot = args[2], spoutId = args[3], topic = args[4];
        int partition = Integer.parseInt(args[5]);
        boolean wildcard = false, commit = false;
        String topologyId = "zk2kafka-test-1", ack = "";
        int emit = 0;
        for (int i = 6; i < args.length; i++) {
            switch (args[i]) {
                case "--wildcard": wildcard = true; break;
                case "--commit": commit = true; break;
                case "--topology": topologyId = args[++i]; break;
                case "--emit": emit = Integer.parseInt(args[++i]); break;
                case "--ack": ack = args[++i]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }

        // The state store exactly as KafkaSpout.open configures it.
        Map<String, Object> stateConf = new HashMap<>();
        stateConf.put("transactional.zookeeper.servers", Collections.singletonList(zk[0]));
        stateConf.put("transactional.zookeeper.port", Integer.parseInt(zk[1]));
        stateConf.put("transactional.zookeeper.root", zkRoot);
        stateConf.put("storm.zookeeper.session.timeout", 20000);
        stateConf.put("storm.zookeeper.connection.timeout", 15000);
        stateConf.put("storm.zookeeper.retry.times", 5);
        stateConf.put("storm.zookeeper.retry.interval", 1000);
        ZkState state = new ZkState(stateConf);

        GlobalPartitionInformation info = new GlobalPartitionInformation(topic, wildcard);
        info.addPartition(partition, broker);
        SpoutConfig spoutConfig = new SpoutConfig(new StaticHosts(info), topic, zkRoot, spoutId);
        spoutConfig.startOffsetTime = kafka.api.OffsetRequest.EarliestTime();
        Map<String, Object> stormConf = new HashMap<>();
        stormConf.put("topology.name", "zk2kafka-storm-test");
        DynamicPartitionConnections conns = new DynamicPartitionConnections(spoutConfig, KafkaUtils.makeBrokerReader(stormConf, spoutConfig));
        Partition p = new Partition(broker, topic, partition, wildcard);
        conns.register(p);
        try {
            PartitionManager pm = new PartitionManager(conns, topologyId, state, stormConf, spoutConfig, p);
            System.out.println("read " + pm.lastCompletedOffset());

            Collector sink = new Collector();
            SpoutOutputCollector collector = new SpoutOutputCollector(sink);
            for (int tries = 0; sink.offsets.size() < emit && tries < 50; tries++) {
                // KafkaSpout.EmitState is package-private: compare by name.
                if (String.valueOf(pm.next(collector)).equals("NO_EMITTED")) {
                    Thread.sleep(100); // the fetch found nothing yet: the broker may still be appending
                }
            }
            if (emit > 0) {
                System.out.println("emitted " + sink.offsets.stream().map(String::valueOf).collect(Collectors.joining(",")));
            }
            List<Long> acks = new ArrayList<>();
            if (ack.equals("all")) {
                acks.addAll(sink.offsets);
            } else if (!ack.isEmpty()) {
                for (String s : ack.split(",")) {
                    acks.add(Long.parseLong(s));
                }
            }
            for (Long o : acks) {
                pm.ack(o);
            }
            if (commit) {
                pm.commit();
                System.out.println("committed " + pm.lastCompletedOffset());
                String path = zkRoot + "/" + spoutId + "/" + p.getId();
                System.out.println("znode " + path + " " + new String(state.readBytes(path), "UTF-8"));
            }
            pm.close();
        } finally {
            conns.clear();
            state.close();
        }
    }

    // Collector records the offset of each emitted tuple's message id (PartitionManager's
    // KafkaMessageId, a package-private class with a public offset field).
    static class Collector implements ISpoutOutputCollector {
        final List<Long> offsets = new ArrayList<>();

        public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
            try {
                Field f = messageId.getClass().getDeclaredField("offset");
                f.setAccessible(true);
                offsets.add(f.getLong(messageId));
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
            return Arrays.asList(1);
        }

        public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
            emit(streamId, tuple, messageId);
        }

        public long getPendingCount() {
            return 0;
        }

        public void reportError(Throwable error) {
            throw new RuntimeException(error);
        }
    }
}
