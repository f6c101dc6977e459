package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

// appendQuoted's fast path must serialize exactly as strconv.Quote, or saved plans would stop
// matching fresh ones.
func TestAppendQuotedIsQuote(t *testing.T) {
	cases := []string{"", "orders", "g-1.x_y", " lead space", "tab\tin", "quote\"in", `back\slash`,
		"del\x7f", "nul\x00", "ünïcode", "emoji 🙂", "bad utf8 \xff", "~}|{", "/consumers/g/offsets/t/0"}
	for b := range 256 {
		cases = append(cases, "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range cases {
		if got, want := string(appendQuoted([]byte("x"), s)), "x"+strconv.Quote(s); got != want {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
	}
}

// The fingerprint is the same whether records reach the hash one by one or buffered.
func TestFingerprintBufferingIsInvisible(t *testing.T) {
	unbuffered := func(recs [][]string) string {
		h := sha256.New()
		for _, r := range recs {
			line := ""
			for i, f := range r {
				if i > 0 {
					line += " "
				}
				line += strconv.Quote(f)
			}
			h.Write([]byte(line + "\n"))
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	for _, n := range []int{0, 1, 100, fpFlushAt / 10, fpFlushAt} { // up to many flushes
		var recs [][]string
		w := &fpWriter{h: sha256.New()}
		for i := range n {
			r := []string{"rec", strconv.Itoa(i), strings.Repeat("x", i%50)}
			recs = append(recs, r)
			for _, f := range r {
				w.str(f)
			}
			w.end()
		}
		if got, want := w.sum(), unbuffered(recs); got != want {
			t.Errorf("%d records: %s, want %s", n, got, want)
		}
	}
}
