// Vectors writes test vectors for the Go decoder, made and judged by Kafka's own code: record
// keys and values encoded by Kafka's generated classes, plus truncations and seeded random
// mutations of them, each decoded by the broker's own reader:
//   3.9: kafka.coordinator.group.GroupMetadataManager.readMessageKey / readOffsetMessageValue
//   4.x: org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde.deserialize
// Regenerate (see java_test.go):
//   java -cp "$KAFKA_LIBS/*" offsetlog/testdata/java/Vectors.java > offsetlog/testdata/java/vectors-<version>.txt
//
// Lines: key <hex> ok offset <version> <group hex> <topic hex> <partition>
//        key <hex> ok group <version> <group hex>
//        key <hex> ok unknown <version>
//        value <hex> ok <version> <offset> <leader epoch> <metadata hex> <commit ts> <expire ts> <topic id hex>
//        key|value <hex> err <exception class>
// An empty hex field is written as "-".
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;

public class Vectors {
    static final HexFormat HEX = HexFormat.of();
    static Object serde;            // 4.x GroupCoordinatorRecordSerde, else null
    static Method readKey, readValue, deserialize;

    public static void main(String[] args) throws Exception {
        try {
            serde = Class.forName("org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde").getConstructor().newInstance();
            deserialize = serde.getClass().getMethod("deserialize", ByteBuffer.class, ByteBuffer.class);
        } catch (ClassNotFoundException e) {
            Class<?> gmm = Class.forName("kafka.coordinator.group.GroupMetadataManager");
            readKey = gmm.getMethod("readMessageKey", ByteBuffer.class);
            readValue = gmm.getMethod("readOffsetMessageValue", ByteBuffer.class);
        }
        String[] names = {"", "g", "grüppe-日本語-😀", "x".repeat(130)};
        List<byte[]> keys = new ArrayList<>();
        for (short kv = 0; kv <= 1; kv++)
            for (String n : names) keys.add(prefixed(kv, new OffsetCommitKey().setGroup(n).setTopic("t-" + n).setPartition(kv == 0 ? 7 : -1)));
        keys.add(prefixed((short) 2, new GroupMetadataKey().setGroup("gm")));
        keys.add(HEX.parseHex("0003000161"));   // a 4.x consumer-group record type
        keys.add(HEX.parseHex("7fff"));
        keys.add(HEX.parseHex("ffff00016100016200000001"));
        List<byte[]> values = new ArrayList<>();
        for (short v = 0; v <= 4; v++) {
            for (String n : names) {
                OffsetCommitValue ov = new OffsetCommitValue().setOffset(v * 1000L + n.length()).setMetadata(n)
                    .setCommitTimestamp(1700000000000L + v);
                if (v == 1) ov.setExpireTimestamp(n.isEmpty() ? -1 : 1800000000000L);
                if (v >= 3) ov.setLeaderEpoch(n.isEmpty() ? -1 : 42);
                values.add(MessageUtil.toVersionPrefixedBytes(v, ov));
            }
        }
        OffsetCommitValue tagged = new OffsetCommitValue().setOffset(5).setLeaderEpoch(3).setMetadata("m").setCommitTimestamp(9);
        tagged.unknownTaggedFields().add(new RawTaggedField(7, new byte[] {1, 2, 3}));
        values.add(MessageUtil.toVersionPrefixedBytes((short) 4, tagged));
        try {
            OffsetCommitValue withID = new OffsetCommitValue().setOffset(6).setLeaderEpoch(-1).setMetadata("id").setCommitTimestamp(10);
            withID.getClass().getMethod("setTopicId", Uuid.class).invoke(withID, new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L));
            values.add(MessageUtil.toVersionPrefixedBytes((short) 4, withID));
        } catch (NoSuchMethodException e) {
            // before 4.1: no topic id field
        }
        values.add(HEX.parseHex("0005000000000000000100000000000000000000"));

        Random rnd = new Random(20240601);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (byte[] k : keys) for (byte[] in : variants(k, rnd)) if (seen.add("k" + hex(in))) System.out.println("key " + hex(in) + " " + decodeKey(in));
        for (byte[] v : values) for (byte[] in : variants(v, rnd)) if (seen.add("v" + hex(in))) System.out.println("value " + hex(in) + " " + decodeValue(in));
    }

    static byte[] prefixed(short version, Message m) {
        // The key message is written at its version 0; the prefix is the record type.
        byte[] out = MessageUtil.toVersionPrefixedBytes((short) 0, m);
        ByteBuffer.wrap(out).putShort(version);
        return out;
    }

    // variants: the input, every truncation (the first 40 and last 8 for long inputs), and
    // seeded random mutations: byte flips, extreme bytes, insertions, deletions.
    static List<byte[]> variants(byte[] in, Random rnd) {
        List<byte[]> out = new ArrayList<>();
        out.add(in);
        for (int n = 0; n < in.length; n++) if (n < 40 || n > in.length - 8) out.add(java.util.Arrays.copyOf(in, n));
        byte[] extremes = {0, (byte) 0x7f, (byte) 0x80, (byte) 0xff, 1};
        for (int i = 0; i < 32 && in.length > 0; i++) {
            byte[] m = in.clone();
            int at = rnd.nextInt(Math.min(in.length, 64));
            switch (i % 4) {
                case 0 -> m[at] ^= (byte) (1 << rnd.nextInt(8));
                case 1 -> m[at] = extremes[rnd.nextInt(extremes.length)];
                case 2 -> {
                    m = new byte[in.length + 1];
                    System.arraycopy(in, 0, m, 0, at);
                    m[at] = extremes[rnd.nextInt(extremes.length)];
                    System.arraycopy(in, at, m, at + 1, in.length - at);
                }
                default -> {
                    m = new byte[in.length - 1];
                    System.arraycopy(in, 0, m, 0, at);
                    System.arraycopy(in, at + 1, m, at, in.length - at - 1);
                }
            }
            out.add(m);
        }
        return out;
    }

    static String decodeKey(byte[] in) {
        try {
            if (serde == null) {
                Object k = readKey.invoke(null, ByteBuffer.wrap(in));
                String cls = k.getClass().getSimpleName();
                short ver = (short) k.getClass().getMethod("version").invoke(k);
                if (cls.equals("OffsetKey")) {
                    Object gtp = k.getClass().getMethod("key").invoke(k);
                    String g = (String) gtp.getClass().getMethod("group").invoke(gtp);
                    org.apache.kafka.common.TopicPartition tp = (org.apache.kafka.common.TopicPartition) gtp.getClass().getMethod("topicPartition").invoke(gtp);
                    return "ok offset " + ver + " " + hex(g) + " " + hex(tp.topic()) + " " + tp.partition();
                }
                if (cls.equals("GroupMetadataKey")) return "ok group " + ver + " " + hex((String) k.getClass().getMethod("key").invoke(k));
                return "ok unknown " + ver;
            }
            Object rec = deserialize.invoke(serde, ByteBuffer.wrap(in), null);
            // 4.1: the key is the message itself; its apiKey is the record type (the prefix).
            org.apache.kafka.common.protocol.ApiMessage msg =
                (org.apache.kafka.common.protocol.ApiMessage) rec.getClass().getMethod("key").invoke(rec);
            short ver = msg.apiKey();
            String cls = msg.getClass().getSimpleName();
            if (cls.endsWith("OffsetCommitKey")) {
                return "ok offset " + ver + " " + hex(str(msg, "group")) + " " + hex(str(msg, "topic")) + " " + msg.getClass().getMethod("partition").invoke(msg);
            }
            if (cls.equals("GroupMetadataKey")) return "ok group " + ver + " " + hex(str(msg, "group"));
            return "ok unknown " + ver;
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c.getClass().getSimpleName().equals("UnknownRecordTypeException")) return "ok unknown " + (in.length >= 2 ? ByteBuffer.wrap(in).getShort() : -1);
            return "err " + c.getClass().getSimpleName();
        } catch (Exception e) {
            return "err " + e.getClass().getSimpleName();
        }
    }

    static String decodeValue(byte[] in) {
        try {
            long offset, commitTs, expireTs = -1;
            int epoch;
            String meta, topicID = "-";
            short ver = in.length >= 2 ? ByteBuffer.wrap(in).getShort() : -1;
            if (serde == null) {
                Object o = readValue.invoke(null, ByteBuffer.wrap(in));
                offset = (long) o.getClass().getMethod("offset").invoke(o);
                epoch = ((Optional<Integer>) o.getClass().getMethod("leaderEpoch").invoke(o)).orElse(-1);
                meta = (String) o.getClass().getMethod("metadata").invoke(o);
                commitTs = (long) o.getClass().getMethod("commitTimestamp").invoke(o);
                scala.Option<?> exp = (scala.Option<?>) o.getClass().getMethod("expireTimestamp").invoke(o);
                if (exp.isDefined()) expireTs = (long) exp.get();
            } else {
                byte[] key = prefixed((short) 1, new OffsetCommitKey().setGroup("g").setTopic("t").setPartition(0));
                Object rec = deserialize.invoke(serde, ByteBuffer.wrap(key), ByteBuffer.wrap(in));
                Object vav = rec.getClass().getMethod("value").invoke(rec);
                OffsetCommitValue v = (OffsetCommitValue) vav.getClass().getMethod("message").invoke(vav);
                offset = v.offset();
                epoch = v.leaderEpoch();
                meta = v.metadata();
                commitTs = v.commitTimestamp();
                expireTs = v.expireTimestamp();
                try {
                    Uuid id = (Uuid) v.getClass().getMethod("topicId").invoke(v);
                    if (!id.equals(Uuid.ZERO_UUID)) {
                        topicID = hex(ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array());
                    }
                } catch (NoSuchMethodException e) {
                    // before 4.1
                }
            }
            return "ok " + ver + " " + offset + " " + epoch + " " + hex(meta) + " " + commitTs + " " + expireTs + " " + topicID;
        } catch (java.lang.reflect.InvocationTargetException e) {
            return "err " + e.getCause().getClass().getSimpleName();
        } catch (Exception e) {
            return "err " + e.getClass().getSimpleName();
        }
    }

    static String str(Object msg, String field) throws Exception {
        return (String) msg.getClass().getMethod(field).invoke(msg);
    }

    static String hex(String s) { return hex(s.getBytes(StandardCharsets.UTF_8)); }

    static String hex(byte[] b) { return b.length == 0 ? "-" : HEX.formatHex(b); }
}
