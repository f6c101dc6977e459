package migrate

import (
	"cmp"
	"crypto/sha256"
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
// Covered: the selection, every legacy group with its sorted live consumers, every legacy offset
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
	h := sha256.New()
	line(h, fingerprintVersion)
	groups := slices.Clone(in.Filter.Groups)
	slices.Sort(groups)
	line(h, "filter", quoteList(groups), strconv.Quote(in.Filter.GroupRegex),
		strconv.Quote(in.Filter.TopicRegex), strconv.Quote(in.Filter.ExcludeGroupRegex))
	legacy := slices.Clone(in.Legacy)
	slices.SortFunc(legacy, func(a, b LegacyGroup) int { return cmp.Compare(a.Group, b.Group) })
	for _, g := range legacy {
		fingerprintGroup(h, g, in)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func fingerprintGroup(h hash.Hash, g LegacyGroup, in Inputs) {
	live := slices.Clone(g.LiveConsumers)
	slices.Sort(live)
	live = slices.Compact(live)
	line(h, "group", strconv.Quote(g.Group), "live", quoteList(live))
	ks, ok := in.Groups[g.Group]
	if ok {
		line(h, "kafka-group", strconv.Quote(ks.State), strconv.Itoa(ks.Members))
	} else {
		line(h, "kafka-group-unknown")
	}
	offsets := slices.Clone(g.Offsets)
	slices.SortFunc(offsets, func(a, b LegacyOffset) int {
		return cmp.Or(compareOffsets(a, b), cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Invalid, b.Invalid))
	})
	for _, o := range offsets {
		line(h, "offset", strconv.Quote(o.Topic), itoa32(o.Partition), strconv.FormatInt(o.Offset, 10),
			strconv.Quote(o.Path), strconv.Quote(o.Invalid))
		if o.Invalid != "" {
			continue
		}
		if k, ok := ks.Committed[TopicPartition{o.Topic, o.Partition}]; ok {
			line(h, "commit", strconv.FormatInt(k, 10))
		} else {
			line(h, "no-commit")
		}
		ti, ok := in.Topics[o.Topic]
		switch {
		case !ok:
			line(h, "topic-unknown")
		case !ti.Exists:
			line(h, "topic-missing")
		default:
			if r, ok := ti.Partitions[o.Partition]; ok {
				line(h, "range", strconv.FormatInt(r.LogStart, 10), strconv.FormatInt(r.LogEnd, 10))
			} else {
				// The partition count is part of the partition-missing reason.
				line(h, "partition-missing", strconv.Itoa(len(ti.Partitions)))
			}
		}
	}
}

func line(h hash.Hash, fields ...string) {
	for i, f := range fields {
		if i > 0 {
			h.Write([]byte{' '})
		}
		h.Write([]byte(f))
	}
	h.Write([]byte{'\n'})
}

func quoteList(xs []string) string {
	b := []byte{'['}
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, x)
	}
	return string(append(b, ']'))
}

func itoa32(v int32) string { return strconv.FormatInt(int64(v), 10) }
