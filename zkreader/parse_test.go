package zkreader

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseOffset(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string // substring of the reason; "" means success
	}{
		{in: "0", want: 0},
		{in: "42", want: 42},
		{in: "42\n", want: 42},
		{in: " \t42\r\n", want: 42},
		{in: "0042", want: 42},
		{in: "9223372036854775807", want: 9223372036854775807},
		{in: "", wantErr: "empty offset data"},
		{in: " \n", wantErr: "only whitespace"},
		{in: "-1", wantErr: "sentinel"},
		{in: "-1\n", wantErr: "sentinel"},
		{in: "-5", wantErr: "negative"},
		{in: "abc", wantErr: "not a decimal number"},
		{in: "+5", wantErr: "not a decimal number"},
		{in: "1_000", wantErr: "not a decimal number"},
		{in: "0x10", wantErr: "not a decimal number"},
		{in: "1.5", wantErr: "not a decimal number"},
		{in: "4 2", wantErr: "not a decimal number"},
		{in: "42\x00", wantErr: "not a decimal number"},
		{in: "\u00a042", wantErr: "not a decimal number"}, // non-ASCII space is not trimmed
		{in: "-", wantErr: "not a decimal number"},
		{in: "--1", wantErr: "not a decimal number"},
		{in: "9223372036854775808", wantErr: "beyond the int64 range"},
		{in: "99999999999999999999", wantErr: "beyond the int64 range"},
		{in: `{"offset":5}`, wantErr: "not a decimal number"},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, err := ParseOffset([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseOffset(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseOffset(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseOffsetQuotesLongDataShort(t *testing.T) {
	_, err := ParseOffset([]byte(strings.Repeat("x", 100000)))
	if err == nil {
		t.Fatal("accepted 100000 x")
	}
	if len(err.Error()) > 200 || !strings.Contains(err.Error(), "100000 bytes") {
		t.Errorf("error for a large znode is %d bytes: %.300s", len(err.Error()), err)
	}
}

func TestParsePartition(t *testing.T) {
	tests := []struct {
		in      string
		want    int32
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "7", want: 7},
		{in: "2147483647", want: 2147483647},
		{in: "", wantErr: "empty"},
		{in: "0-3", wantErr: "0.7-era"},
		{in: "12-0", wantErr: "0.7-era"},
		{in: "07", wantErr: "leading zero"},
		{in: "00", wantErr: "leading zero"},
		{in: "-1", wantErr: "not a partition number"},
		{in: "+1", wantErr: "not a partition number"},
		{in: "a", wantErr: "not a partition number"},
		{in: " 1", wantErr: "not a partition number"},
		{in: "1-", wantErr: "not a partition number"},
		{in: "2147483648", wantErr: "beyond the int32 range"},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, err := ParsePartition(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePartition(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParsePartition(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"g", "my-group.v2", "a b", "ü", "..."} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00", "a\x7f", "\ufff5", string([]byte{0xff})} {
		if err := ValidateName(bad); err == nil {
			t.Errorf("ValidateName(%q) accepted", bad)
		}
	}
}

// FuzzParseOffset checks ParseOffset against its contract: it accepts exactly the
// ASCII-whitespace-trimmed strings of digits that fit an int64, and then returns their value.
func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"0", "42\n", "-1", "", "abc", "99999999999999999999", " 7 ", "+1", "0x1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseOffset(data)
		trimmed := strings.Trim(string(data), " \t\n\v\f\r")
		want, perr := strconv.ParseInt(trimmed, 10, 64)
		canonical := allDigits(trimmed) && perr == nil
		if canonical != (err == nil) {
			t.Fatalf("ParseOffset(%q) = %d, %v; digits-only int64: %v", data, v, err, canonical)
		}
		if err == nil && (v != want || v < 0) {
			t.Fatalf("ParseOffset(%q) = %d, want %d", data, v, want)
		}
		if err != nil && len(err.Error()) > 400 { // 40 quoted bytes, each at most 4 escaped characters
			t.Fatalf("ParseOffset error is %d bytes long", len(err.Error()))
		}
	})
}

func FuzzParsePartition(f *testing.F) {
	for _, s := range []string{"0", "7", "07", "0-3", "-1", "2147483648"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := ParsePartition(name)
		if err != nil {
			return
		}
		// Accepted names are exactly the canonical decimal forms of a non-negative int32.
		if p < 0 || strconv.Itoa(int(p)) != name {
			t.Fatalf("ParsePartition(%q) = %d", name, p)
		}
	})
}

// TestParseOffsetNote: whitespace around the number is read as the number and noted (the plan
// says it in the entry's reason); clean data has no note; invalid data stays an error.
func TestParseOffsetNote(t *testing.T) {
	tests := []struct {
		in       string
		want     int64
		wantNote string // "" means none
		wantErr  bool
	}{
		{in: "42", want: 42},
		{in: " 42", want: 42, wantNote: `znode data " 42" has whitespace around the offset: read as 42`},
		{in: "42\n", want: 42, wantNote: `znode data "42\n" has whitespace around the offset: read as 42`},
		{in: "\t7\r\n", want: 7, wantNote: `read as 7`},
		{in: " \n", wantErr: true},
		{in: " -1 ", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, note, err := ParseOffsetNote([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseOffsetNote(%q) error %v, want error: %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want || (tt.wantNote == "") != (note == "") || !strings.Contains(note, tt.wantNote) {
				t.Errorf("ParseOffsetNote(%q) = %d, %q; want %d, a note containing %q", tt.in, got, note, tt.want, tt.wantNote)
			}
		})
	}
}
