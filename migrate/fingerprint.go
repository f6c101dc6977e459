package migrate

import (
	"cmp"
	"encoding/hex"
	"hash"
	"slices"
	"strconv"
)

// fingerprintVersion names the serialization below; change it whenever the serialization does.
const fingerprintVersion = "zk2kafka-fingerprint-v1"

// Fingerprint hashes exactly the inputs that decide a plan, in a canonical order, so that a plan
// saved now can be checked against a fresh read later: equal fingerprints mean the same plan.
//
// Covered: the selection and the group map, every legacy group with its sorted live consumers, every legacy offset
// (topic, partition, offset, znode path, invalid reason), the group's Kafka state and member
// count, and for every valid legacy offset the Kafka commit of that partition (or its absence)
// and the topic's existence and the partition's log start and end. Not covered, on purpose:
// znode mtimes, Kafka commits of partitions ZooKeeper does not have, other partitions' ranges
// and the offsets retention: none of them changes a class or an action. The policy is not an
// input; it is stored in the plan itself.
//
// Strings are written with strconv.Quote and every record is one line starting with its kind,
// so no two different inputs serialize alike.
func Fingerprint(in Inputs) string {
	w := newFingerprinter(in.Filter)
	legacy := slices.Clone(in.Legacy)
	slices.SortFunc(legacy, func(a, b LegacyGroup) int { return cmp.Compare(a.Group, b.Group) })
	for _, g := range legacy {
		fingerprintGroup(w, g, in)
	}
	return w.sum()
}

// fingerprintHead hashes what precedes the groups: the serialization version and the selection.
func fingerprintHead(w *fpWriter, f FilterSpec) {
	w.word(fingerprintVersion).end()
	groups := slices.Clone(f.Groups)
	slices.Sort(groups)
	w.word("filter").list(groups).str(f.GroupRegex).str(f.TopicRegex).str(f.ExcludeGroupRegex).end()
	// A group map decides which Kafka group each legacy group is compared with and written
	// into: a plan copied under another mapping must not check equal. Hashed only when set, so
	// the fingerprints of plans without one are those of earlier versions.
	for _, p := range f.GroupMap {
		w.word("group-map").str(p.Legacy).str(p.Kafka).end()
	}
}

func fingerprintGroup(w *fpWriter, g LegacyGroup, in Inputs) {
	live := slices.Clone(g.LiveConsumers)
	slices.Sort(live)
	live = slices.Compact(live)
	w.word("group").str(g.Group).word("live").list(live).end()
	ks, ok := in.Groups[g.Group]
	if ok {
		w.word("kafka-group").str(ks.State).num(int64(ks.Members)).end()
	} else {
		w.word("kafka-group-unknown").end()
	}
	offsets := sortedOffsets(g.Offsets, fingerprintOrder)
	for _, o := range offsets {
		w.word("offset").str(o.Topic).num(int64(o.Partition)).num(o.Offset).str(o.Path).str(o.Invalid).end()
		if s := o.Source; s != nil {
			// Hashed only when translated, so in-place plans keep their fingerprints. A copy of
			// a saved plan re-reads the offset syncs: a translation that changed since is drift.
			w.word("source").str(s.Topic).num(s.Offset).num(s.MaxReread).str(string(s.Blocked)).end()
		}
		if o.Invalid != "" {
			continue
		}
		if k, ok := ks.Committed[TopicPartition{o.Topic, o.Partition}]; ok {
			w.word("commit").num(k).end()
		} else {
			w.word("no-commit").end()
		}
		ti, ok := in.Topics[o.Topic]
		switch {
		case !ok:
			w.word("topic-unknown").end()
		case !ti.Exists:
			w.word("topic-missing").end()
		default:
			if r, ok := ti.Partitions[o.Partition]; ok {
				w.word("range").num(r.LogStart).num(r.LogEnd).end()
			} else {
				// The partition count is part of the partition-missing reason.
				w.word("partition-missing").num(int64(len(ti.Partitions))).end()
			}
		}
	}
}

// fingerprintOrder is compareOffsets with ties broken by everything else that is hashed.
func fingerprintOrder(a, b LegacyOffset) int {
	return cmp.Or(compareOffsets(a, b), cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Invalid, b.Invalid))
}

// fpWriter hashes records of space-separated fields, one line each. Records collect in a buffer
// that is hashed a few KB at a time (the hash is of the concatenation either way): the
// fingerprint cost a 100k-offset plan more CPU than its classification (0.52 s against 0.36 s
// over three plans), in quoting and in one hash Write per record.
type fpWriter struct {
	h   hash.Hash
	buf []byte
}

// fpFlushAt is the buffered size at which records are handed to the hash.
const fpFlushAt = 8 << 10

func (w *fpWriter) sep() {
	if n := len(w.buf); n > 0 && w.buf[n-1] != '\n' {
		w.buf = append(w.buf, ' ')
	}
}

func (w *fpWriter) word(s string) *fpWriter { w.sep(); w.buf = append(w.buf, s...); return w }
func (w *fpWriter) str(s string) *fpWriter  { w.sep(); w.buf = appendQuoted(w.buf, s); return w }
func (w *fpWriter) num(v int64) *fpWriter   { w.sep(); w.buf = strconv.AppendInt(w.buf, v, 10); return w }

func (w *fpWriter) list(xs []string) *fpWriter {
	w.sep()
	w.buf = append(w.buf, '[')
	for i, x := range xs {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendQuoted(w.buf, x)
	}
	w.buf = append(w.buf, ']')
	return w
}

// end finishes the record (hash.Hash.Write never returns an error).
func (w *fpWriter) end() {
	w.buf = append(w.buf, '\n')
	if len(w.buf) >= fpFlushAt {
		w.flush()
	}
}

func (w *fpWriter) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

// sum hashes what is buffered and returns the fingerprint.
func (w *fpWriter) sum() string {
	w.flush()
	return "sha256:" + hex.EncodeToString(w.h.Sum(nil))
}

// appendQuoted appends strconv.Quote(s), byte for byte: names are almost always printable ASCII
// without quote or backslash, which quote as themselves, and AppendQuote's rune-by-rune escaping
// was 6% of a 100k-offset plan's CPU. Anything else goes through AppendQuote.
func appendQuoted(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.AppendQuote(buf, s)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
