package mirror

import "github.com/zk2kafka/zk2kafka/migrate"

// What the mirror planned from a batch read may be stale by the time a group's rate-limit wait
// ends; these filters keep only the writes that a fresh read of the target store still allows.

// stillValid keeps the commits (and their writes, in step) that fk, Kafka as read just now,
// still allows: a mirror write only strictly above the committed offset, a keep-alive only of
// the very offset it keeps alive. Any other is dropped: writing it would move Kafka backwards.
func stillValid(fk migrate.GroupState, commits []migrate.Commit, ws []Write) ([]migrate.Commit, []Write) {
	var keptC []migrate.Commit
	var keptW []Write
	for i, w := range ws {
		cur, ok := fk.Committed[w.TopicPartition]
		valid := !ok || w.To > cur
		if w.Reason == ReasonKeepalive {
			valid = ok && cur == w.To
		}
		if valid {
			keptC = append(keptC, commits[i])
			keptW = append(keptW, w)
		}
	}
	return keptC, keptW
}

// stillBehind keeps the reverse writes that fresh, ZooKeeper as read just now, still allows:
// none while a legacy consumer is live, none over an unusable znode, and otherwise only where
// Kafka's value is strictly above the znode's.
func stillBehind(fresh groupView, live bool, ws []Write) []Write {
	if live {
		return nil
	}
	var kept []Write
	for _, w := range ws {
		o, ok := fresh.zk[w.TopicPartition]
		if fresh.invalid[w.TopicPartition] || (ok && w.To <= o.Offset) {
			continue
		}
		kept = append(kept, w)
	}
	return kept
}
