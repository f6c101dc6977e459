package datadir

import (
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"math"
)

// maxRecord bounds one length-prefixed field (a znode's data, a path, a transaction). ZooKeeper
// itself refuses anything above jute.maxbuffer (1 MiB by default; operators raise it to a few
// MiB): a length far beyond that is a corrupt length, and honouring it would allocate
// gigabytes before the read fails.
const maxRecord = 256 << 20

// juteReader decodes ZooKeeper's jute binary encoding (big-endian ints and longs, int-prefixed
// buffers and strings) from a stream, and tracks the stream offset of every field so that an
// error can name where the file went wrong. When sum is set it keeps the Adler32 of every byte
// consumed so far, as the CheckedInputStream under ZooKeeper's snapshot reader does; the
// consumed bytes are hashed in large runs (before each refill and when the sum is asked for),
// not field by field, which keeps the checksum off the per-field path.
type juteReader struct {
	file   string // named in every error
	where  string // "" or " of the decompressed stream": what the offsets count
	src    io.Reader
	buf    []byte
	r, w   int
	base   int64 // stream offset of buf[0]
	sum    hash.Hash32
	hashed int // buf[:hashed] is already in sum
	eof    bool
	srcErr error
	// unchecked reads checksums without comparing them: only the fuzz targets set it, so that
	// their mutations reach the fields a checksum covers instead of all failing at the seal.
	unchecked bool
}

func newJuteReader(file, where string, src io.Reader, checksum bool) *juteReader {
	j := &juteReader{file: file, where: where, src: src, buf: make([]byte, 64<<10)}
	if checksum {
		j.sum = adler32.New()
	}
	return j
}

// errTruncated marks a read that hit the end of the stream inside a field.
var errTruncated = errors.New("truncated")

// offset is the stream offset of the next byte to consume.
func (j *juteReader) offset() int64 { return j.base + int64(j.r) }

// corrupt builds the error of a bad field at offset off.
func (j *juteReader) corrupt(off int64, format string, args ...any) error {
	return &FormatError{File: j.file, Offset: off, Where: j.where, Reason: fmt.Sprintf(format, args...)}
}

// truncated is the error of a field cut short by the end of the stream.
func (j *juteReader) truncated(off int64, what string) error {
	if j.srcErr != nil {
		return &FormatError{File: j.file, Offset: off, Where: j.where, Reason: fmt.Sprintf("reading %s: %v", what, j.srcErr), err: j.srcErr}
	}
	return &FormatError{File: j.file, Offset: off, Where: j.where, Reason: "file ends inside " + what, err: errTruncated}
}

// fill makes at least n bytes available in buf[r:w], or reports false at the end of the stream.
// The buffer grows with the data that actually arrives, not with n: a corrupt length claiming
// hundreds of MiB in a small file costs no more than the file.
func (j *juteReader) fill(n int) bool {
	if j.w-j.r >= n {
		return true
	}
	if n > maxRecord+64 {
		return false
	}
	if j.r > 0 {
		j.hash()
		copy(j.buf, j.buf[j.r:j.w])
		j.base += int64(j.r)
		j.w -= j.r
		j.r, j.hashed = 0, 0
	}
	for j.w < n && !j.eof {
		if j.w == len(j.buf) {
			nb := make([]byte, min(2*len(j.buf), max(n, len(j.buf)+1)))
			copy(nb, j.buf[:j.w])
			j.buf = nb
		}
		m, err := j.src.Read(j.buf[j.w:])
		j.w += m
		if err != nil {
			j.eof = true
			if err != io.EOF {
				j.srcErr = err
			}
		}
	}
	return j.w-j.r >= n
}

// hash adds the consumed, not yet hashed bytes to the checksum.
func (j *juteReader) hash() {
	if j.sum != nil && j.r > j.hashed {
		j.sum.Write(j.buf[j.hashed:j.r])
	}
	j.hashed = j.r
}

// checksum is the Adler32 of every byte consumed so far.
func (j *juteReader) checksum() uint32 {
	j.hash()
	return j.sum.Sum32()
}

// atEOF reports that no byte is left.
func (j *juteReader) atEOF() bool { return !j.fill(1) && j.srcErr == nil }

func (j *juteReader) readInt(what string) (int32, error) {
	if !j.fill(4) {
		return 0, j.truncated(j.offset(), what)
	}
	b := j.buf[j.r:]
	v := int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	j.r += 4
	return v, nil
}

func (j *juteReader) readLong(what string) (int64, error) {
	if !j.fill(8) {
		return 0, j.truncated(j.offset(), what)
	}
	b := j.buf[j.r:]
	var v uint64
	for i := range 8 {
		v = v<<8 | uint64(b[i])
	}
	j.r += 8
	return int64(v), nil
}

func (j *juteReader) readByte(what string) (byte, error) {
	if !j.fill(1) {
		return 0, j.truncated(j.offset(), what)
	}
	b := j.buf[j.r]
	j.r++
	return b, nil
}

// readLen reads the int length of a buffer, string or vector: -1 (null) reads as 0.
func (j *juteReader) readLen(what string) (int, error) {
	off := j.offset()
	n, err := j.readInt(what + " length")
	if err != nil {
		return 0, err
	}
	switch {
	case n == -1:
		return 0, nil
	case n < 0 || n > maxRecord:
		return 0, j.corrupt(off, "%s length %d is impossible", what, n)
	}
	return int(n), nil
}

// readBuffer reads an int-prefixed byte buffer (jute buffer or ustring). The slice aliases the
// reader's buffer: valid until the next read.
func (j *juteReader) readBuffer(what string) ([]byte, error) {
	n, err := j.readLen(what)
	if err != nil {
		return nil, err
	}
	return j.readN(n, what)
}

// readN reads n bytes; the slice aliases the reader's buffer until the next read.
func (j *juteReader) readN(n int, what string) ([]byte, error) {
	off := j.offset()
	if !j.fill(n) {
		return nil, j.truncated(off, what)
	}
	b := j.buf[j.r : j.r+n]
	j.r += n
	return b, nil
}

// skipACLs skips a vector<ACL>: count, then {int perms, ustring scheme, ustring id}.
func (j *juteReader) skipACLs(what string) error {
	off := j.offset()
	n, err := j.readInt(what + " count")
	if err != nil {
		return err
	}
	if n < -1 || n > math.MaxInt16 {
		return j.corrupt(off, "%s count %d is impossible", what, n)
	}
	for range n {
		if _, err := j.readInt(what + " perms"); err != nil {
			return err
		}
		if _, err := j.readBuffer(what + " scheme"); err != nil {
			return err
		}
		if _, err := j.readBuffer(what + " id"); err != nil {
			return err
		}
	}
	return nil
}

// FormatError is a file of the data directory that does not read as ZooKeeper wrote it: it
// names the file and the byte offset of the field at fault.
type FormatError struct {
	File   string
	Offset int64
	Where  string // "" or " of the decompressed stream"
	Reason string
	err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: offset %d%s: %s", e.File, e.Offset, e.Where, e.Reason)
}

func (e *FormatError) Unwrap() error { return e.err }
