package kafkaconn

import "unicode/utf16"

// OffsetsPartition is the __consumer_offsets partition that holds group's offsets when the topic has
// n partitions: Kafka's Utils.abs(groupId.hashCode()) % n, where Utils.abs maps MinInt32 to 0
// (not to itself as Math.abs does). It returns -1 when n is not positive.
func OffsetsPartition(group string, n int32) int32 {
	if n <= 0 {
		return -1
	}
	h := javaStringHashCode(group)
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

// javaStringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over the UTF-16
// code units of s, in int32 arithmetic that wraps (as Go's does). Each invalid UTF-8 byte
// counts as one U+FFFD; Java's decoder may group a malformed sequence differently, but names
// that came from Java (every name the broker stores) are valid UTF-8.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
