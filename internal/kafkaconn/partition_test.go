package kafkaconn

import "testing"

// TestPartition checks against values computed by Kafka itself: hashCode and
// Utils.abs(hashCode) % n from kafka-clients 3.9.1 and 4.1.1 (identical), printed by
// `java -cp "$KAFKA_LIBS/*" ../../offsetlog/testdata/java/Hash.java`.
// "consumerGroup1" tells Utils.abs apart from the bit mask (h & 0x7fffffff), which gives 42
// for n=50; the three MinInt32 strings check Utils.abs(MinInt32) = 0.
func TestOffsetsPartition(t *testing.T) {
	tests := []struct {
		group string
		hash  int32
		want  [4]int32 // for n = 50, 1, 7, 200
	}{
		{"", 0, [4]int32{0, 0, 0, 0}},
		{"a", 97, [4]int32{47, 0, 6, 97}},
		{"consumerGroup1", -983959256, [4]int32{6, 0, 0, 56}},
		{"polygenelubricants", -2147483648, [4]int32{0, 0, 0, 0}},
		{"GydZG_", -2147483648, [4]int32{0, 0, 0, 0}},
		{"DESIGNING WORKHOUSES", -2147483648, [4]int32{0, 0, 0, 0}},
		{"grüppe", -1233264812, [4]int32{12, 0, 3, 12}},
		{"日本語グループ", -305235731, [4]int32{31, 0, 3, 131}},
		{"g\U0001F600x", 58028462, [4]int32{12, 0, 2, 62}}, // surrogate pair: two UTF-16 units
		{"console-consumer-12345", 158455506, [4]int32{6, 0, 6, 106}},
		{"zk2kafka-migration-group-with-a-long-name-0001", 1648018320, [4]int32{20, 0, 4, 120}},
		{"\uffff\uffff\uffff", 65076255, [4]int32{5, 0, 6, 55}},
	}
	for _, tc := range tests {
		if h := javaStringHashCode(tc.group); h != tc.hash {
			t.Errorf("javaStringHashCode(%q) = %d, Java says %d", tc.group, h, tc.hash)
		}
		for i, n := range []int32{50, 1, 7, 200} {
			if got := OffsetsPartition(tc.group, n); got != tc.want[i] {
				t.Errorf("Partition(%q, %d) = %d, Kafka says %d", tc.group, n, got, tc.want[i])
			}
		}
	}
	for _, n := range []int32{0, -1} {
		if got := OffsetsPartition("g", n); got != -1 {
			t.Errorf("Partition(g, %d) = %d, want -1", n, got)
		}
	}
}
