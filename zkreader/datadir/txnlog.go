package datadir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"os"
)

// ZooKeeper opcodes (ZooDefs.OpCode) of the transactions that change the data tree.
const (
	opNotification    = 0
	opCreate          = 1
	opDelete          = 2
	opSetData         = 5
	opSetACL          = 7
	opCheck           = 13
	opMulti           = 14
	opCreate2         = 15
	opReconfig        = 16
	opCreateContainer = 19
	opDeleteContainer = 20
	opCreateTTL       = 21
	opCreateSession   = -10
	opCloseSession    = -11
	opError           = -1
)

// txnHeader is TxnHeader: long clientId, int cxid, long zxid, long time, int type.
type txnHeader struct {
	session int64
	zxid    int64
	time    int64
	typ     int32
}

// logEnd says how a log file ended.
type logEnd struct {
	// torn is set when the file ends in a record that is cut short or fails its CRC, with only
	// zeros (the preallocated tail) after it: the server died while writing it, and that
	// transaction was never acknowledged. offset is where that record starts.
	torn   bool
	offset int64
	reason string
}

// readLog reads one transaction log file: FileHeader ("ZKLG", version, dbid), then records of
// (long Adler32 of the txn bytes, int length, txn bytes, byte 'B'), then zeros up to the
// preallocated size (FileTxnLog, Util.readTxnBytes). Each record is passed to apply; a record
// whose zxid is above stop ends the read early (stopped is then true). A bad record followed
// by more data is corruption, an error naming the file and offset; one followed only by zeros
// or the end of the file is a torn tail, reported in logEnd.
func readLog(path string, apply func(h txnHeader, body []byte, off int64) (stop bool, err error)) (end logEnd, stopped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return end, false, err
	}
	defer f.Close()
	return readLogFrom(path, f, true, apply)
}

// logFile is what readLogFrom reads: an *os.File, or bytes in the tests.
type logFile interface {
	io.Reader
	io.ReaderAt
}

// readLogFrom is readLog over an open file named path; without check, the records' checksums
// are not compared (for the fuzz target).
func readLogFrom(path string, f logFile, check bool, apply func(h txnHeader, body []byte, off int64) (stop bool, err error)) (end logEnd, stopped bool, err error) {
	j := newJuteReader(path, "", f, false)
	j.unchecked = !check
	off := j.offset()
	magic, err := j.readInt("the file header")
	if err != nil {
		return end, false, err
	}
	if magic != logMagic {
		return end, false, j.corrupt(off, "magic %#x is not a transaction log's (%#x, \"ZKLG\")", uint32(magic), logMagic)
	}
	if _, err := j.readInt("the file header version"); err != nil {
		return end, false, err
	}
	if _, err := j.readLong("the file header dbid"); err != nil {
		return end, false, err
	}
	for {
		rec := j.offset()
		body, bad := readRecord(j)
		if bad == nil && body == nil {
			return end, false, nil // the zero length that starts the preallocated tail, or EOF
		}
		if bad != nil {
			if tailIsZero(f, rec) {
				return logEnd{torn: true, offset: rec, reason: bad.Error()}, false, nil
			}
			return end, false, bad
		}
		h, err := decodeHeader(j, body, rec)
		if err != nil {
			return end, false, err
		}
		stop, err := apply(h, body, rec)
		if err != nil {
			return end, false, err
		}
		if stop {
			return end, true, nil
		}
	}
}

// readRecord reads one log record. It returns (nil, nil) at the clean end of the records (the
// end of the file, or the zero length of the preallocated tail), the txn bytes of a good
// record, or the error of a bad one.
func readRecord(j *juteReader) ([]byte, error) {
	rec := j.offset()
	if j.atEOF() {
		return nil, nil
	}
	crc, err := j.readLong("a record's checksum")
	if err != nil {
		return nil, err
	}
	n, err := j.readInt("a record's length")
	if err != nil {
		return nil, err
	}
	if n == 0 && crc == 0 {
		return nil, nil
	}
	if n <= 0 || n > maxRecord {
		return nil, j.corrupt(rec+8, "record length %d is impossible", n)
	}
	body, err := j.readN(int(n), "a record")
	if err != nil {
		return nil, err
	}
	if got := adler32.Checksum(body); uint64(got) != uint64(crc) && !j.unchecked {
		return nil, j.corrupt(rec, "record checksum mismatch: the file says %#x, the record sums to %#x (Adler32)", uint64(crc), got)
	}
	eor, err := j.readByte("a record's end marker")
	if err != nil {
		return nil, err
	}
	if eor != 'B' {
		return nil, j.corrupt(j.offset()-1, "record end marker is %#x, not 'B'", eor)
	}
	return body, nil
}

// tailIsZero reports whether the file holds only zeros after the bad record that starts at
// rec: what a write cut short leaves in a preallocated log. The record's own bytes, as far as
// its length field reaches, may hold anything.
func tailIsZero(f io.ReaderAt, rec int64) bool {
	pos := rec + 12
	var head [12]byte
	if n, _ := f.ReadAt(head[:], rec); n == 12 {
		if l := int32(binary.BigEndian.Uint32(head[8:])); l > 0 && l <= maxRecord {
			pos += int64(l) + 1
		}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, pos)
		for _, b := range buf[:n] {
			if b != 0 {
				// Data after a bad record: a torn write leaves zeros behind it, so this is
				// damage in the middle of the log, not its end.
				return false
			}
		}
		pos += int64(n)
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// decodeHeader reads the TxnHeader that starts a record's txn bytes.
func decodeHeader(j *juteReader, body []byte, rec int64) (txnHeader, error) {
	d := &bodyReader{b: body}
	h := txnHeader{}
	h.session = d.long()
	_ = d.int() // cxid
	h.zxid = d.long()
	h.time = d.long()
	h.typ = d.int()
	if d.bad {
		return h, j.corrupt(rec+12, "transaction of %d bytes is shorter than its header", len(body))
	}
	return h, nil
}

// bodyReader decodes the jute fields of one transaction held in memory; a read past the end
// sets bad instead of failing each call.
type bodyReader struct {
	b   []byte
	pos int
	bad bool
}

func (d *bodyReader) take(n int) []byte {
	if n < 0 || len(d.b)-d.pos < n {
		d.bad = true
		d.pos = len(d.b)
		return nil
	}
	b := d.b[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *bodyReader) int() int32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
}

func (d *bodyReader) long() int64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return int64(v)
}

func (d *bodyReader) buffer() []byte {
	n := d.int()
	if n == -1 {
		return nil
	}
	return d.take(int(n))
}

func (d *bodyReader) skipACLs() {
	n := d.int()
	if n < -1 || int(n) > len(d.b) {
		d.bad = true
		return
	}
	for range n {
		d.int()
		d.buffer()
		d.buffer()
		if d.bad {
			return
		}
	}
}

// applyTxn replays one transaction on t, as DataTree.processTxn does for the znodes t keeps.
// body is the whole record (header included); off names the record in errors.
func applyTxn(t *tree, h txnHeader, body []byte, file string, off int64) error {
	d := &bodyReader{b: body, pos: 8 + 4 + 8 + 8 + 4}
	if err := applyOp(t, h, h.typ, d, false); err != nil {
		return &FormatError{File: file, Offset: off, Reason: fmt.Sprintf("transaction zxid %#x: %v", h.zxid, err)}
	}
	return nil
}

// applyOp applies one operation (a transaction, or one operation of a multi) read from d.
func applyOp(t *tree, h txnHeader, typ int32, d *bodyReader, inMulti bool) error {
	switch typ {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
		// CreateTxn: path, data, acl, boolean ephemeral, int parentCVersion (absent in the
		// V0 records of the oldest logs); CreateContainerTxn and CreateTTLTxn have no
		// ephemeral flag (their owner is a marker, not a session).
		path := d.buffer()
		data := d.buffer()
		d.skipACLs()
		var owner int64
		if typ == opCreate || typ == opCreate2 {
			if e := d.take(1); e != nil && e[0] != 0 {
				owner = h.session
			}
		}
		if d.bad {
			return fmt.Errorf("create record (type %d) is truncated", typ)
		}
		applyCreate(t, path, data, h, owner)
	case opDelete, opDeleteContainer:
		path := d.buffer()
		if d.bad {
			return fmt.Errorf("delete record is truncated")
		}
		applyDelete(t, path)
	case opSetData, opReconfig:
		path := d.buffer()
		data := d.buffer()
		if d.bad {
			return fmt.Errorf("setData record is truncated")
		}
		if t.classify(path) == kept {
			t.setData(path, data, h.time)
		}
	case opCloseSession:
		// CloseSessionTxn (3.6+) lists the paths to delete; the session's ephemerals are
		// the same set, and older logs carry nothing else.
		t.closeSession(h.session)
	case opMulti:
		if inMulti {
			return errors.New("multi inside a multi")
		}
		return applyMulti(t, h, d)
	case opError, opCheck, opSetACL, opCreateSession, opNotification:
		// An error txn is a request that failed (and, in a multi, marks every operation of
		// a failed multi): nothing changed. Checks, ACLs and sessions change no data.
	default:
		return fmt.Errorf("unknown transaction type %d", typ)
	}
	return nil
}

// applyMulti applies each operation of a MultiTxn: a count, then each one's type and body.
func applyMulti(t *tree, h txnHeader, d *bodyReader) error {
	n := d.int()
	if d.bad || n < 0 || int(n) > len(d.b) {
		return errors.New("multi record is truncated")
	}
	for i := range n {
		sub := d.int()
		data := d.buffer()
		if d.bad {
			return fmt.Errorf("operation %d of the multi is truncated", i)
		}
		if err := applyOp(t, h, sub, &bodyReader{b: data}, true); err != nil {
			return fmt.Errorf("operation %d of the multi: %w", i, err)
		}
	}
	return nil
}

func applyCreate(t *tree, path, data []byte, h txnHeader, owner int64) {
	switch t.classify(path) {
	case kept:
		t.create(path, data, h.time, owner)
	case isChroot:
		t.chrootExists = true
	}
}

func applyDelete(t *tree, path []byte) {
	switch t.classify(path) {
	case kept:
		t.delete(path)
	case isChroot:
		t.chrootExists = false
	}
}
