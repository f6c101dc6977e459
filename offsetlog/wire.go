package offsetlog

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt marks bytes that are not a valid record key or value: truncated, a length that
// points past the end, a null where Kafka's schema allows none, an over-long varint.
var ErrCorrupt = errors.New("corrupt __consumer_offsets record")

// maxStringLen is the longest string Kafka's generated readers accept (0x7fff bytes): longer
// lengths are rejected before anything is allocated.
const maxStringLen = 0x7fff

// cursor reads Kafka's big-endian wire types from b. Every read checks the remaining length
// first, so corrupt input gives an error and never a panic or an allocation larger than b.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) remaining() int { return len(c.b) - c.off }

func (c *cursor) take(n int, what string) ([]byte, error) {
	if n < 0 || n > c.remaining() {
		return nil, fmt.Errorf("%w: %s needs %d bytes at byte %d, %d left", ErrCorrupt, what, n, c.off, c.remaining())
	}
	p := c.b[c.off : c.off+n]
	c.off += n
	return p, nil
}

func (c *cursor) int16(what string) (int16, error) {
	p, err := c.take(2, what)
	if err != nil {
		return 0, err
	}
	return int16(binary.BigEndian.Uint16(p)), nil
}

func (c *cursor) int32(what string) (int32, error) {
	p, err := c.take(4, what)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

func (c *cursor) int64(what string) (int64, error) {
	p, err := c.take(8, what)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// uvarint reads Kafka's unsigned varint (at most 5 bytes). Java silently drops the bits of a
// 5th byte above 32; here a value that does not fit 32 bits is corrupt.
func (c *cursor) uvarint(what string) (uint32, error) {
	var v uint64
	for i := 0; i < 5; i++ {
		p, err := c.take(1, what)
		if err != nil {
			return 0, err
		}
		v |= uint64(p[0]&0x7f) << (7 * i)
		if p[0]&0x80 == 0 {
			if v > 0xffffffff {
				return 0, fmt.Errorf("%w: %s: varint overflows 32 bits", ErrCorrupt, what)
			}
			return uint32(v), nil
		}
	}
	return 0, fmt.Errorf("%w: %s: varint longer than 5 bytes", ErrCorrupt, what)
}

// string reads a non-nullable STRING: int16 length, then that many bytes.
func (c *cursor) string(what string) (string, error) {
	n, err := c.int16(what + " length")
	if err != nil {
		return "", err
	}
	return c.stringBody(int(n), what)
}

// compactString reads a non-nullable COMPACT_STRING: unsigned varint length+1, then the bytes.
func (c *cursor) compactString(what string) (string, error) {
	n, err := c.uvarint(what + " length")
	if err != nil {
		return "", err
	}
	return c.stringBody(int(n)-1, what)
}

func (c *cursor) stringBody(n int, what string) (string, error) {
	switch {
	case n < 0:
		return "", fmt.Errorf("%w: non-nullable %s is null", ErrCorrupt, what)
	case n > maxStringLen:
		return "", fmt.Errorf("%w: %s length %d exceeds %d", ErrCorrupt, what, n, maxStringLen)
	}
	p, err := c.take(n, what)
	if err != nil {
		return "", err
	}
	// Kept as the raw bytes: Java would turn invalid UTF-8 into U+FFFD, but every string the
	// broker writes comes from a Java String and is valid UTF-8 already.
	return string(p), nil
}
