// Hash prints, for group names, Java's String.hashCode and Kafka's __consumer_offsets partition
// Utils.abs(hashCode) % n for n = 50, 1, 7, 200: the expected values of TestPartition.
//   java -cp "$KAFKA_LIBS/*" offsetlog/testdata/java/Hash.java
import org.apache.kafka.common.utils.Utils;
public class Hash {
  public static void main(String[] a) {
    String[] gs = {"", "a", "consumerGroup1", "polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES", "grüppe", "日本語グループ", "g\uD83D\uDE00x", "console-consumer-12345", "zk2kafka-migration-group-with-a-long-name-0001", "\uFFFF\uFFFF\uFFFF"};
    int[] ns = {50, 1, 7, 200};
    for (String g : gs) {
      StringBuilder sb = new StringBuilder();
      for (int n : ns) sb.append(" ").append(Utils.abs(g.hashCode()) % n);
      System.out.println(g.hashCode() + sb.toString() + " " + g);
    }
  }
}
