package migrate

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestProvenanceMetadata(t *testing.T) {
	mtime := time.Date(2024, 3, 5, 7, 8, 9, 123, time.FixedZone("CET", 3600))
	tests := []struct {
		name    string
		version string
		mtime   time.Time
		want    string // exact, or "" to check only the bounds
		prefix  string
	}{
		{"plain", "v1.2.3", mtime, "zk2kafka v1.2.3 from zk mtime=2024-03-05T06:08:09Z", ""},
		{"zero mtime", "v1", time.Time{}, "zk2kafka v1 from zk mtime=unknown", ""},
		{"empty version", "", mtime, "zk2kafka unknown from zk mtime=2024-03-05T06:08:09Z", ""},
		{"invalid utf8", "v\xff1", mtime, "zk2kafka v\uFFFD1 from zk mtime=2024-03-05T06:08:09Z", ""},
		{"long ascii", strings.Repeat("x", 10000), mtime, "", "zk2kafka xxx"},
		{"long astral", strings.Repeat("😀", 5000), mtime, "", "zk2kafka 😀"}, // 2 UTF-16 units each
		{"long mixed", "é" + strings.Repeat("😀a", 3000), mtime, "", "zk2kafka é😀a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Provenance{Version: tt.version, Mtime: tt.mtime}.String()
			if tt.want != "" && got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if !strings.HasPrefix(got, tt.prefix) || !strings.HasSuffix(got, " from zk mtime="+suffixTime(tt.mtime)) {
				t.Fatalf("got %.60q... not shaped like the provenance string", got)
			}
			if n := utf16Len(got); n > MaxMetadataUnits {
				t.Fatalf("%d UTF-16 units, limit %d", n, MaxMetadataUnits)
			}
			if !utf8.ValidString(got) {
				t.Fatal("not valid UTF-8")
			}
			if len(tt.version) > 5000 && utf16Len(got) < MaxMetadataUnits-1 {
				t.Fatalf("cut too short: %d units", utf16Len(got))
			}
		})
	}
}

func suffixTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"€", 1}, {"😀", 2}, {"a😀b", 4}, {"\xff", 1},
	}
	for _, tt := range tests {
		if got := utf16Len(tt.s); got != tt.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestProvenanceRoundTrip(t *testing.T) {
	mtime := time.Date(2024, 3, 5, 6, 8, 9, 0, time.UTC)
	tests := []Provenance{
		{Version: "v1.2.3", Mtime: mtime},
		{Version: "v1.2.3", Mtime: mtime, Adjust: 1},
		{Version: "v1", Adjust: -1},
		{Version: "odd from zk mtime= name", Mtime: mtime, Adjust: 7}, // the suffix is found from the end
	}
	for _, want := range tests {
		s := want.String()
		got, ok := ParseProvenance(s)
		if !ok || got.Version != want.Version || !got.Mtime.Equal(want.Mtime) || got.Adjust != want.Adjust {
			t.Errorf("ParseProvenance(%q) = %+v, %v; want %+v", s, got, ok, want)
		}
	}
}

func TestParseProvenanceRejects(t *testing.T) {
	for _, s := range []string{
		"", "consumer-metadata", "zk2kafka v1", "zk2kafka v1 from zk mtime=yesterday",
		"zk2kafka v1 from zk mtime=unknown offset-adjust=x", "zk2kafka v1 from zk mtime=unknown offset-adjust=+0",
		"zk2kafka from zk mtime=unknown trailing",
	} {
		if p, ok := ParseProvenance(s); ok {
			t.Errorf("ParseProvenance(%q) = %+v, want not ok", s, p)
		}
	}
	// The shape of commits written before the adjust was recorded still reads, as adjust 0.
	if p, ok := ParseProvenance("zk2kafka v0.9.0 from zk mtime=2024-03-05T06:08:09Z"); !ok || p.Adjust != 0 || p.Version != "v0.9.0" {
		t.Errorf("old provenance: %+v, %v", p, ok)
	}
}
