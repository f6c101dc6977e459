package migrate

import "strconv"

// reasonBuf is the stack buffer a partition's reason is built in; a longer reason (an
// --offset-adjust and a clamp) simply grows onto the heap.
const reasonBuf = 160

// reason builds an Entry's reason by appending, without fmt: a plan makes one reason per
// partition, and fmt.Sprintf cost an allocation per argument (boxing) and one per string.
type reason []byte

func (b reason) s(x string) reason { return append(b, x...) }
func (b reason) n(v int64) reason  { return strconv.AppendInt(b, v, 10) }

// zkName starts a reason with the ZooKeeper offset (and the adjustment that made it).
func zkName(b reason, raw, zk, adj int64) reason {
	b = b.s("ZooKeeper ").n(zk)
	if adj == 0 {
		return b
	}
	b = b.s(" (znode ").n(raw).s(", --offset-adjust ")
	if adj >= 0 {
		b = b.s("+") // as fmt's %+d
	}
	return b.n(adj).s(")")
}

// translatedName starts the reason of an offset translated into the target's log: the znode's
// offset, where it lands, and the records a consumer may read again.
func translatedName(b reason, src Source, target int64) reason {
	b = b.s("ZooKeeper ").n(src.Offset).s(" of source topic ").s(src.Topic).s(" is ").n(target).s(" in the target")
	if src.MaxReread == 0 {
		return b.s(" (an offset sync pins it)")
	}
	return b.s(" (rounded down to the offset sync below: up to ").n(src.MaxReread).s(" records read again)")
}

// untranslated leaves no target offset on a translated entry blocked before its offset was
// placed in the target's log (a missing topic or partition, an offset no sync covers): the value there would be the source's, and must never be read as the target's.
func untranslated(e *Entry) {
	if e.Source != nil {
		e.ZK, e.Target = nil, 0
	}
}

// decideConflict sets class, action and reason from the target and the Kafka commit; name
// is the start of the reason.
func decideConflict(e *Entry, name reason, policy ConflictPolicy) {
	t := e.Target
	if e.Kafka == nil {
		e.Class, e.Action = ClassZKOnly, ActionWrite
		e.Reason = string(name.s("; Kafka has no commit: write ").n(t))
		return
	}
	k := *e.Kafka
	switch {
	case t == k:
		e.Class, e.Action = ClassEqual, ActionSkip
		e.Reason = string(name.s("; Kafka already equal at ").n(k))
	case t > k:
		e.Class = ClassZKAhead
		switch policy {
		case ConflictMax, ConflictZK:
			e.Action = ActionWrite
			e.Reason = string(name.s("; ahead of Kafka ").n(k).s(": write ").n(t))
		case ConflictKafka:
			e.Action = ActionSkip
			e.Reason = string(name.s("; ahead of Kafka ").n(k).s(": --on-conflict=kafka keeps ").n(k))
		default:
			e.Action = ActionBlock
			e.Reason = string(name.s("; differs from Kafka ").n(k).s(": --on-conflict=fail"))
		}
	default:
		e.Class = ClassKafkaAhead
		switch policy {
		case ConflictMax:
			e.Action = ActionSkip
			e.Reason = string(name.s("; Kafka ").n(k).s(" is ahead: --on-conflict=max never moves an offset backwards"))
		case ConflictZK:
			e.Action = ActionWrite
			e.Reason = string(name.s("; --on-conflict=zk moves Kafka BACKWARDS from ").n(k).s(" to ").n(t))
		case ConflictKafka:
			e.Action = ActionSkip
			e.Reason = string(name.s("; Kafka ").n(k).s(" is ahead: --on-conflict=kafka keeps ").n(k))
		default:
			e.Action = ActionBlock
			e.Reason = string(name.s("; differs from Kafka ").n(k).s(": --on-conflict=fail"))
		}
	}
}
