package kafkawriter

import (
	"strings"
	"time"
	"unicode/utf16"
)

// MaxMetadataUnits is Kafka's default offset.metadata.max.bytes. The broker compares it with
// the Java String length of the metadata, that is UTF-16 code units, not bytes.
const MaxMetadataUnits = 4096

// ProvenanceMetadata is the metadata string zk2kafka writes with each commit:
// "zk2kafka <version> from zk mtime=<RFC3339>", the znode's mtime in UTC ("unknown" when
// zero). It is valid UTF-8 and at most MaxMetadataUnits UTF-16 units: an over-long version
// string is cut, never the result rejected.
func ProvenanceMetadata(version string, mtime time.Time) string {
	m := "unknown"
	if !mtime.IsZero() {
		m = mtime.UTC().Format(time.RFC3339)
	}
	version = strings.ToValidUTF8(version, "\uFFFD")
	if version == "" {
		version = "unknown"
	}
	prefix, suffix := "zk2kafka ", " from zk mtime="+m
	room := MaxMetadataUnits - utf16Len(prefix) - utf16Len(suffix)
	return prefix + truncateUTF16(version, room) + suffix
}

// utf16Len is the length of s in UTF-16 code units, as Java's String.length().
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

// truncateUTF16 cuts s to at most limit UTF-16 units at a rune boundary.
func truncateUTF16(s string, limit int) string {
	n := 0
	for i, r := range s {
		w := max(utf16.RuneLen(r), 1) // -1 only for runes valid UTF-8 never yields
		if n+w > limit {
			return s[:i]
		}
		n += w
	}
	return s
}
