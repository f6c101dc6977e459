package migrate

import "errors"

// ErrGroupNotFound means a group that was asked for by name is not in the legacy store. A typo
// in --group must fail the run, not silently migrate nothing.
var ErrGroupNotFound = errors.New("group not found")

// ErrGroupActive means the Kafka group has members or is rebalancing, so the coordinator refuses
// an admin (generation -1) commit. Adapters wrap UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION and
// REBALANCE_IN_PROGRESS with it so the core can tell "stop the consumers" from other failures.
var ErrGroupActive = errors.New("kafka group is active")

// ErrPartitionMissing means Kafka answered that it has no such topic or partition
// (UNKNOWN_TOPIC_OR_PARTITION on a commit). Usually no retry fixes it: plan calls it
// topic-missing or partition-missing, and in dual-commit it is mostly a legacy offset left
// behind by a deleted topic. A coordinator whose metadata lags a topic just created says the
// same, so the core checks Kafka's metadata before treating it as final.
var ErrPartitionMissing = errors.New("no such topic or partition in kafka")
