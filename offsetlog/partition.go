package offsetlog

import "github.com/zk2kafka/zk2kafka/internal/kafkaconn"

// Partition is the __consumer_offsets partition that holds group's offsets when the topic has
// n partitions (kafkaconn.OffsetsPartition, with which the Kafka adapter finds coordinators).
func Partition(group string, n int32) int32 { return kafkaconn.OffsetsPartition(group, n) }
