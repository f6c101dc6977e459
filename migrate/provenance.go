package migrate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// MaxMetadataUnits is Kafka's default offset.metadata.max.bytes. The broker compares it with
// the Java String length of the metadata, that is UTF-16 code units, not bytes.
const MaxMetadataUnits = 4096

// Provenance is what zk2kafka writes in the metadata of every offset it commits into Kafka:
// which build wrote it, the mtime of the znode it came from, and the --offset-adjust it was
// written with. verify reads it back: a Kafka offset ahead of ZooKeeper by exactly the adjust of
// the copy that wrote it is that copy's decision, not consumer progress.
type Provenance struct {
	Version string
	Mtime   time.Time // zero: unknown
	Adjust  int64
}

const (
	provenancePrefix = "zk2kafka "
	provenanceFrom   = " from zk mtime="
	provenanceAdjust = " offset-adjust="
)

// String is the metadata string: "zk2kafka <version> from zk mtime=<RFC3339>", the mtime in UTC
// ("unknown" when zero), then " offset-adjust=<+N>" when the adjust is not 0 (so commits without
// an adjust read as they always did). It is valid UTF-8 and at most MaxMetadataUnits UTF-16 units:
// an over-long version string is cut, never the result rejected.
func (p Provenance) String() string {
	m := "unknown"
	if !p.Mtime.IsZero() {
		m = p.Mtime.UTC().Format(time.RFC3339)
	}
	version := strings.ToValidUTF8(p.Version, "\uFFFD")
	if version == "" {
		version = "unknown"
	}
	suffix := provenanceFrom + m
	if p.Adjust != 0 {
		suffix += fmt.Sprintf("%s%+d", provenanceAdjust, p.Adjust)
	}
	room := MaxMetadataUnits - utf16Len(provenancePrefix) - utf16Len(suffix)
	return provenancePrefix + truncateUTF16(version, room) + suffix
}

// ParseProvenance reads a commit's metadata back; ok is false when zk2kafka did not write it
// (a consumer's own commit carries its own metadata, usually empty).
func ParseProvenance(s string) (p Provenance, ok bool) {
	if !strings.HasPrefix(s, provenancePrefix) {
		return Provenance{}, false
	}
	i := strings.LastIndex(s, provenanceFrom)
	if i < len(provenancePrefix) {
		return Provenance{}, false
	}
	p.Version = s[len(provenancePrefix):i]
	rest := s[i+len(provenanceFrom):]
	if m, adj, found := strings.Cut(rest, provenanceAdjust); found {
		n, err := strconv.ParseInt(adj, 10, 64)
		if err != nil || n == 0 {
			return Provenance{}, false
		}
		p.Adjust, rest = n, m
	}
	if rest != "unknown" {
		t, err := time.Parse(time.RFC3339, rest)
		if err != nil {
			return Provenance{}, false
		}
		p.Mtime = t
	}
	return p, true
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
