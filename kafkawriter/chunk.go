package kafkawriter

import "github.com/zk2kafka/zk2kafka/migrate"

// recordOverhead is a generous estimate of the bytes one offset record takes in the batch the
// coordinator appends to __consumer_offsets, beside its group, topic and metadata strings:
// key (version, string lengths, partition: 10), value v1..v4 (version, offset, leader epoch,
// metadata length, commit and expire timestamps, tagged fields: ~35) and record framing
// (length, attributes, deltas, key/value lengths, headers: ~32).
const recordOverhead = 96

// recordBytes estimates the bytes of the record one commit appends to __consumer_offsets.
func recordBytes(group string, c migrate.Commit) int {
	return recordOverhead + len(group) + len(c.Topic) + len(c.Metadata)
}

// chunks splits commits into OffsetCommit requests of at most maxParts partitions and at most
// maxBytes estimated record bytes each (one commit larger than maxBytes still goes alone).
// Order is kept, so chunks are deterministic.
func chunks(group string, commits []migrate.Commit, maxParts, maxBytes int) [][]migrate.Commit {
	var out [][]migrate.Commit
	start, size := 0, 0
	for i, c := range commits {
		n := recordBytes(group, c)
		if i > start && (i-start >= maxParts || size+n > maxBytes) {
			out = append(out, commits[start:i:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(commits) {
		out = append(out, commits[start:len(commits):len(commits)])
	}
	return out
}
