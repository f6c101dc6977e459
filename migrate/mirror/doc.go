// Package mirror is dual-commit's mirror: a long-running loop that keeps Kafka's committed
// offsets in step with ZooKeeper's for the selected consumer groups during a rollover, and
// optionally (Reverse) ZooKeeper in step with Kafka once Kafka consumers own a group.
//
// It reads, through the store interfaces of package migrate:
//   - ZooKeeper (migrate.LegacyStore): the list of groups under /consumers, and each selected
//     group's offset znodes and its legacy consumers' registrations (ids, owners);
//   - ZooKeeper's changes (migrate.LegacyWatcher, optional): which groups to read again, and when
//     the list of groups changed; without a watcher, a periodic full resync alone;
//   - Kafka (migrate.KafkaState): each group's state, members and committed offsets, the log
//     start and end of the topics it is about to write, and offsets.retention.minutes.
//
// It writes, forward only, and only with Execute (otherwise the writes are reported, not made):
//   - Kafka (migrate.OffsetCommitter): admin commits of ZooKeeper's offsets for the groups whose
//     Kafka group is not active, each decided as plan decides it (migrate.BuildEntries), and
//     keep-alives that re-commit unchanged offsets before retention expires them;
//   - ZooKeeper (migrate.LegacyOffsetWriter, with Reverse): Kafka's offsets, a compare-and-set
//     per znode, for the kafka-primary groups no legacy consumer holds.
//
// Every write is held under a Lease when one is set (a single writer among instances) and paced
// by a RateLimiter when one is set. Each group's Phase is decided from both stores at each sync.
// The package never prints: what it does is reported to an Observer.
package mirror
