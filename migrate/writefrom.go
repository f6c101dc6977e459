package migrate

// CheckWriteFrom is the condition of any write into Kafka from legacy (copy, restore --to
// kafka): from a SnapshotStore, whose liveness registrations say nothing of who runs now, the
// caller must say the legacy consumers are stopped (legacyStopped). The refusal wraps
// ErrLivenessUnseen.
func CheckWriteFrom(legacy LegacyStore, legacyStopped bool) error {
	if s, ok := innermost(legacy).(SnapshotStore); ok && !legacyStopped {
		return unseenError{s.Snapshot() + "; stop them, then say so with --legacy-stopped (nothing was written)"}
	}
	return nil
}

// unseenError is the refusal of a write from a snapshot: its message as the operator reads it,
// ErrLivenessUnseen for a caller.
type unseenError struct{ msg string }

func (e unseenError) Error() string { return e.msg }
func (e unseenError) Unwrap() error { return ErrLivenessUnseen }
