// Consume is the Scala high-level consumer (ZookeeperConsumerConnector) of Kafka 1.1.1 as a legacy
// application used it: it reads K records of one topic as group G, commits, and exits. Kafka 1.1.1's
// default offsets.storage is zookeeper, so the commit is the consumer's own write of
// /consumers/G/offsets/T/P (ZkUtils), not a request to the broker.
//
//   java -cp 'libs/*:classes' Consume ZK_CONNECT_WITH_CHROOT TOPIC GROUP K
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import kafka.consumer.Consumer;
import kafka.consumer.ConsumerConfig;
import kafka.consumer.ConsumerIterator;
import kafka.consumer.KafkaStream;
import kafka.javaapi.consumer.ConsumerConnector;
import kafka.message.MessageAndMetadata;

public class Consume {
  public static void main(String[] args) {
    String zk = args[0], topic = args[1], group = args[2];
    int k = Integer.parseInt(args[3]);
    Properties p = new Properties();
    p.put("zookeeper.connect", zk);
    p.put("group.id", group);
    // The group has no offsets yet: start at the log's beginning, as a new group's first run did.
    p.put("auto.offset.reset", "smallest");
    // Only the explicit commit below may write, so the stored offset is the one after K records.
    p.put("auto.commit.enable", "false");
    // A record that never comes ends the run with an error instead of a hang.
    p.put("consumer.timeout.ms", "60000");
    ConsumerConnector c = Consumer.createJavaConsumerConnector(new ConsumerConfig(p));
    Map<String, List<KafkaStream<byte[], byte[]>>> streams =
        c.createMessageStreams(Collections.singletonMap(topic, 1));
    ConsumerIterator<byte[], byte[]> it = streams.get(topic).get(0).iterator();
    for (int i = 0; i < k; i++) {
      MessageAndMetadata<byte[], byte[]> m = it.next();
      System.out.printf("consumed partition %d offset %d%n", m.partition(), m.offset());
    }
    c.commitOffsets(true);
    c.shutdown();
  }
}
