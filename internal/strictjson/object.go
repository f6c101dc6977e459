package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Object checks that raw is one JSON object whose keys are all known, none repeated and
// every required one present and, but for those in nullable, not null. encoding/json alone would
// accept repeated keys (the last wins), match keys case-insensitively and read a null number as
// 0 ("offset": null as offset 0, "partition": null as partition 0): in a file that decides
// offsets, none of that is acceptable.
// at is the byte offset in raw where a problem was found.
func Object(raw []byte, known, required, nullable []string) (at int64, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		at = dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return at, fmt.Errorf("not a JSON object: %w", err)
		}
		key, _ := tok.(string)
		switch {
		case seen[key]:
			return at, fmt.Errorf("key %q given twice", key)
		case !slices.Contains(known, key):
			return at, fmt.Errorf("unknown key %q (known: %s)", key, strings.Join(known, ", "))
		}
		seen[key] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return dec.InputOffset(), fmt.Errorf("key %q: %w", key, err)
		}
		if string(val) == "null" && slices.Contains(required, key) && !slices.Contains(nullable, key) {
			return at, fmt.Errorf("key %q is null", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return dec.InputOffset(), fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return dec.InputOffset(), errors.New("data after the JSON object")
	}
	for _, k := range required {
		if !seen[k] {
			return 0, fmt.Errorf("missing key %q", k)
		}
	}
	return 0, nil
}

// Decode checks that raw is one object of v's type, as Object with v's field names as the
// known keys, then decodes it into v (a pointer to a struct).
func Decode(raw []byte, v any, required, nullable []string) (int64, error) {
	known := FieldNames(reflect.TypeOf(v).Elem())
	if at, err := Object(raw, known, required, nullable); err != nil {
		return at, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return 0, dec.Decode(v)
}
