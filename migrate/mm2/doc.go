// Package mm2 translates a ZooKeeper offset of a source cluster's topic into the offset of the
// same record in a target cluster that MirrorMaker 2 replicates into. It reads MirrorMaker 2's
// own records, never guesses: an offset sync pins one source offset to one target offset, and an
// offset between two syncs is rounded down to just past the sync before it, as MirrorMaker 2's
// checkpoints do since KAFKA-14666. A consumer resumed there may read again the records between
// that sync and its real position, and never skips one: the translation reports how many it may
// read again at most, and refuses, with a reason, what no sync covers.
//
// The package is pure: the records come from the caller (an adapter reads the offset-syncs
// topic), and it imports the standard library only.
package mm2
