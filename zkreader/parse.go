package zkreader

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxQuoted bounds how much of a bad znode's data an error quotes: a corrupt znode can hold
// up to 1 MiB, and the reason ends up in plans and tables.
const maxQuoted = 40

// ParseOffset parses the data of an offset znode: the decimal next offset to consume, as the
// Scala consumer's ZkUtils wrote it (Long.toString). Only ASCII whitespace around the number
// is tolerated. The sentinel -1, any other negative, empty data, signs, non-digits and values
// beyond int64 are errors, whose text is meant as the Invalid reason of a LegacyOffset.
func ParseOffset(data []byte) (int64, error) {
	s := string(bytes.Trim(data, asciiSpace))
	switch {
	case s == "":
		if len(data) == 0 {
			return 0, errors.New("empty offset data")
		}
		return 0, fmt.Errorf("offset data %s is only whitespace", quote(data))
	case s == "-1":
		return 0, errors.New(`offset data "-1": the no-offset sentinel, not an offset`)
	case s[0] == '-' && len(s) > 1 && allDigits(s[1:]):
		return 0, fmt.Errorf("offset data %s: negative offset", quote(data))
	case !allDigits(s):
		return 0, fmt.Errorf("offset data %s: not a decimal number", quote(data))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Only the range can fail here: the digits were checked above.
		return 0, fmt.Errorf("offset data %s: beyond the int64 range", quote(data))
	}
	return v, nil
}

// ParseOffsetNote is ParseOffset and, for data with whitespace around the number, a note that
// says so ("" otherwise). Such an offset is read as the number, not refused as invalid-znode:
// the data came from a legacy client (a hand-written tool, a trailing newline from a shell), the
// number is unambiguous, and refusing it would block a group's migration for no gain. The note
// goes into the plan entry's reason so that it is not silent.
func ParseOffsetNote(data []byte) (int64, string, error) {
	v, err := ParseOffset(data)
	if err != nil || len(bytes.Trim(data, asciiSpace)) == len(data) {
		return v, "", err
	}
	return v, fmt.Sprintf("znode data %s has whitespace around the offset: read as %d", quote(data), v), nil
}

// asciiSpace is the whitespace ParseOffset trims.
const asciiSpace = " \t\n\v\f\r"

// ParsePartition parses the name of a partition child under offsets/<topic>: a plain
// non-negative int32 in canonical form ("0", "17"; not "017", "+1", "0-3"). A 0.7-era
// "brokerId-partition" name is named as such in the error.
func ParsePartition(name string) (int32, error) {
	switch {
	case name == "":
		return 0, errors.New("empty partition name")
	case isLegacyPair(name):
		return 0, fmt.Errorf("partition name %s looks like a 0.7-era \"brokerId-partition\" name, not a partition number", quote([]byte(name)))
	case !allDigits(name):
		return 0, fmt.Errorf("partition name %s is not a partition number", quote([]byte(name)))
	case len(name) > 1 && name[0] == '0':
		// "07" and "7" would both claim partition 7: refuse to guess which one is meant.
		return 0, fmt.Errorf("partition name %s has a leading zero: not a canonical partition number", quote([]byte(name)))
	}
	v, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("partition name %s is beyond the int32 range", quote([]byte(name)))
	}
	return int32(v), nil
}

// isLegacyPair reports a "<digits>-<digits>" name.
func isLegacyPair(s string) bool {
	a, b, ok := strings.Cut(s, "-")
	return ok && allDigits(a) && allDigits(b)
}

// allDigits reports a non-empty string of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quote renders data for an error message, cut to maxQuoted bytes.
func quote(data []byte) string {
	if len(data) <= maxQuoted {
		return strconv.Quote(string(data))
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(string(data[:maxQuoted])), len(data))
}
