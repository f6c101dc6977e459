package datadir

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/snappy"
)

// snappyMagic opens snappy-java's stream framing (SnappyOutputStream, which ZooKeeper 3.6+
// writes for snapshot.<zxid>.snappy): the 8 magic bytes, then the format version and the
// oldest compatible version as ints. Not the framing format of the snappy project itself.
var snappyMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const snappyHeaderLen = 16

// snappyJavaReader decodes snappy-java's stream: after the header, blocks of (int compressed
// length, raw snappy block). SnappyInputStream also accepts a second header where a block
// length is expected (concatenated streams), and so does this reader.
type snappyJavaReader struct {
	file string
	src  io.Reader
	off  int64 // offset in the compressed file, for errors
	out  []byte
	pos  int
	comp []byte
	hdr  bool
}

func newSnappyJavaReader(file string, src io.Reader) *snappyJavaReader {
	return &snappyJavaReader{file: file, src: src}
}

func (s *snappyJavaReader) err(off int64, format string, args ...any) error {
	return &FormatError{File: s.file, Offset: off, Reason: "snappy stream: " + fmt.Sprintf(format, args...)}
}

func (s *snappyJavaReader) readFull(b []byte, what string) error {
	off := s.off
	n, err := io.ReadFull(s.src, b)
	s.off += int64(n)
	switch {
	case err == io.ErrUnexpectedEOF:
		return &FormatError{File: s.file, Offset: off, Reason: "snappy stream: file ends inside " + what, err: errTruncated}
	case err != nil && err != io.EOF:
		return fmt.Errorf("%s: %w", s.file, err)
	}
	return err
}

func (s *snappyJavaReader) header(rest []byte) error {
	off := s.off - int64(len(rest))
	h := make([]byte, snappyHeaderLen)
	copy(h, rest)
	if err := s.readFull(h[len(rest):], "the header"); err != nil {
		if err == io.EOF {
			return s.err(off, "file ends inside the header")
		}
		return err
	}
	if !bytes.Equal(h[:8], snappyMagic) {
		return s.err(off, "no snappy-java stream header (magic % x)", h[:8])
	}
	if v := int32(binary.BigEndian.Uint32(h[12:])); v > 1 {
		return s.err(off+12, "stream needs format version %d, this reader knows 1", v)
	}
	s.hdr = true
	return nil
}

func (s *snappyJavaReader) Read(p []byte) (int, error) {
	for s.pos == len(s.out) {
		if !s.hdr {
			if err := s.header(nil); err != nil {
				return 0, err
			}
		}
		var lb [4]byte
		off := s.off
		if err := s.readFull(lb[:], "a block length"); err != nil {
			return 0, err // io.EOF at a block boundary: the end of the stream
		}
		if bytes.Equal(lb[:], snappyMagic[:4]) {
			if err := s.header(lb[:]); err != nil {
				return 0, err
			}
			continue
		}
		n := int32(binary.BigEndian.Uint32(lb[:]))
		if n < 0 || n > maxRecord {
			return 0, s.err(off, "block length %d is impossible", n)
		}
		// The block is read a piece at a time, the buffer growing with what arrives: a corrupt
		// length in a small file costs no more than the file.
		s.comp = s.comp[:0]
		for len(s.comp) < int(n) {
			have := len(s.comp)
			piece := min(int(n)-have, max(have, 64<<10))
			s.comp = slices.Grow(s.comp, piece)[:have+piece]
			if err := s.readFull(s.comp[have:], "a block"); err != nil {
				if err == io.EOF {
					return 0, s.err(off, "file ends inside a block")
				}
				return 0, err
			}
		}
		// Snappy expands at most a few dozen times (a 3-byte copy writes up to 64 bytes): a
		// larger claim is a corrupt header, not a reason to allocate it.
		dl, err := snappy.DecodedLen(s.comp)
		if err == nil && dl > 32*len(s.comp)+64 {
			err = fmt.Errorf("it claims %d bytes from %d", dl, len(s.comp))
		}
		if err != nil {
			return 0, s.err(off+4, "bad block: %v", err)
		}
		if cap(s.out) < dl {
			s.out = make([]byte, dl)
		}
		out, err := snappy.Decode(s.out[:cap(s.out)], s.comp)
		if err != nil {
			return 0, s.err(off+4, "bad block: %v", err)
		}
		s.out, s.pos = out, 0
	}
	n := copy(p, s.out[s.pos:])
	s.pos += n
	return n, nil
}
