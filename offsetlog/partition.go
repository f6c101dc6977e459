package offsetlog

import "github.com/zk2kafka/zk2kafka/kafkawriter"

// Partition is the __consumer_offsets partition that holds group's offsets when the topic has
// n partitions (kafkawriter.OffsetsPartition: the Kafka adapter finds coordinators with it).
func Partition(group string, n int32) int32 { return kafkawriter.OffsetsPartition(group, n) }
