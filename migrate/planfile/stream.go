package planfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonStream reads a JSON document a structural byte or a whole value at a time, and knows
// how far into the input it is. It finds a value's bounds without checking its syntax: whoever
// decodes the value checks that (the standard decoder, or decodeGroup, which gives way to the
// standard decoder on anything it does not read itself). json.Decoder did both, and at a
// million entries its readValue alone scanned each group's bytes once more than needed.
type jsonStream struct {
	r   *bufio.Reader
	off int64  // bytes consumed
	buf []byte // the last value's bytes, reused
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// peek skips white space and returns the next byte, without consuming it.
func (s *jsonStream) peek() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if !isSpace(c) {
			if err := s.r.UnreadByte(); err != nil {
				return 0, err
			}
			return c, nil
		}
		s.off++
	}
}

// next skips white space and consumes the next byte.
func (s *jsonStream) next() (byte, error) {
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	if _, err := s.r.Discard(1); err != nil {
		return 0, err
	}
	s.off++
	return c, nil
}

// expect consumes the next byte, which must be want; at names where in the document.
func (s *jsonStream) expect(want byte, at string) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("%s: expected %q at byte %d, got %q", at, want, s.off-1, c)
	}
	return nil
}

// key reads an object key and the colon after it.
func (s *jsonStream) key(at string) (string, error) {
	c, err := s.peek()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", fmt.Errorf("%s: invalid character %q at byte %d looking for beginning of object key string", at, c, s.off)
	}
	raw, err := s.value()
	if err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", fmt.Errorf("%s: object key at byte %d: %w", at, s.off-int64(len(raw)), err)
	}
	return key, s.expect(':', at)
}

// value returns the bytes of the next value, found by its bounds alone: an object or array
// to its matching close (strings skipped whole, so a brace in one is text), a string to its
// closing quote, anything else to the next delimiter. The bytes are valid until the next call.
func (s *jsonStream) value() ([]byte, error) {
	first, err := s.peek()
	if err != nil {
		return nil, err
	}
	s.buf = s.buf[:0]
	b := bounds{kind: first}
	for {
		if _, err := s.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) && b.literal() && len(s.buf) > 0 {
				return s.buf, nil // a number or literal at the very end
			}
			return nil, err
		}
		chunk, err := s.r.Peek(s.r.Buffered())
		if err != nil {
			return nil, err
		}
		n, done := b.scan(chunk, len(s.buf) == 0)
		s.buf = append(s.buf, chunk[:n]...)
		if _, err := s.r.Discard(n); err != nil {
			return nil, err
		}
		s.off += int64(n)
		if done {
			return s.buf, nil
		}
	}
}

// bounds is the state of a value's bound scan across the reader's chunks.
type bounds struct {
	kind       byte // the value's first byte
	depth      int
	inStr, esc bool
}

func (b *bounds) literal() bool { return b.kind != '{' && b.kind != '[' && b.kind != '"' }

// scan reads chunk and returns how many of its bytes belong to the value, and whether the
// value ends there. start says chunk begins the value.
func (b *bounds) scan(chunk []byte, start bool) (int, bool) {
	i := 0
	if start {
		i = 1
		switch b.kind {
		case '{', '[':
			b.depth = 1
		case '"':
			b.inStr = true
		}
	}
	for ; i < len(chunk); i++ {
		c := chunk[i]
		switch {
		case b.inStr:
			if b.stringByte(c) {
				return i + 1, true
			}
		case b.literal():
			if isSpace(c) || c == ',' || c == '}' || c == ']' {
				return i, true
			}
		case c == '"':
			b.inStr = true
		case c == '{' || c == '[':
			b.depth++
		case c == '}' || c == ']':
			b.depth--
			if b.depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(chunk), false
}

// stringByte takes byte c of a string, and reports whether it ends the value (the closing
// quote of a value that is a string).
func (b *bounds) stringByte(c byte) bool {
	switch {
	case b.esc:
		b.esc = false
	case c == '\\':
		b.esc = true
	case c == '"':
		b.inStr = false
		return b.kind == '"'
	}
	return false
}

// atEnd checks that nothing but white space follows the document.
func (s *jsonStream) atEnd() error {
	c, err := s.peek()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	case c == '{' || c == '[' || c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' || (c >= '0' && c <= '9'):
		return fmt.Errorf("trailing data after the plan at byte %d", s.off)
	}
	return fmt.Errorf("after the plan at byte %d: invalid character %q looking for beginning of value", s.off, c)
}

// checkSyntax returns the standard decoder's syntax error for raw, or nil.
func checkSyntax(raw []byte) error {
	if json.Valid(raw) {
		return nil
	}
	var v json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}
