package zkreader

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// The multiRead request (ZooKeeper 3.6+) that go-zookeeper cannot send, read from ZooKeeper's
// own sources (zookeeper.jute, MultiOperationRecord, MultiResponse, FinalRequestProcessor of
// 3.6.4, 3.8.4 and 3.9.3):
//
//	request:  RequestHeader{xid int32, type int32 = 22}
//	          per op: MultiHeader{type int32, done bool = false, err int32 = -1} + the op's record
//	                  (GetDataRequest / GetChildrenRequest: path ustring, watch bool)
//	          MultiHeader{-1, true, -1}
//	response: ReplyHeader{xid int32, zxid int64, err int32}
//	          per op: MultiHeader{type, false, err} + GetDataResponse{data buffer, stat Stat}
//	                  or GetChildrenResponse{children vector<ustring>}; a failed op is
//	                  MultiHeader{-1, false, code} + ErrorResponse{err int32}, in its place
//	          MultiHeader{-1, true, -1}
//
// A failed op (NoNode, NoAuth) fails alone: the server catches its KeeperException and
// answers an ErrorResult for it, so one deleted znode does not cost the batch.
const (
	opGetData      int32 = 4
	opGetChildren  int32 = 8
	opMultiRead    int32 = 22
	opError        int32 = -1 // the type of an ErrorResult, and of the header that ends a multi
	statLen              = 68 // Stat: czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid
	mtimeAt              = 24 // mtime's offset in Stat
	replyHeaderLen       = 16
)

// readOp is one read of a multiRead: a getData of path, or its getChildren when list is set.
type readOp struct {
	path string
	list bool
}

// opResult is one op's answer: children (a listing) or data and mtime (ms since the epoch),
// or err, which is zk.ErrNoNode and zk.ErrNoAuth as go-zookeeper's Get and Children give them.
type opResult struct {
	children []string
	data     []byte
	mtime    int64
	err      error
}

// errShortReply is a multiRead answer that ends before its records do.
var errShortReply = errors.New("zookeeper multiRead answer cut short")

// appendMultiRead appends the body of a multiRead of ops (the part after xid and opcode).
func appendMultiRead(b []byte, ops []readOp) []byte {
	for _, op := range ops {
		typ := opGetData
		if op.list {
			typ = opGetChildren
		}
		b = appendMultiHeader(b, typ, false)
		b = binary.BigEndian.AppendUint32(b, uint32(len(op.path)))
		b = append(b, op.path...)
		b = append(b, 0) // no watch
	}
	return appendMultiHeader(b, opError, true)
}

func appendMultiHeader(b []byte, typ int32, done bool) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	if done {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, 0xffffffff) // err: -1 in requests
}

// decodeMultiRead decodes the body of a multiRead answer (after its ReplyHeader) for ops: one
// result per op, in order. Anything but exactly that is an error: a reader that decoded the
// wrong bytes would report wrong offsets.
func decodeMultiRead(body []byte, ops []readOp) ([]opResult, error) {
	d := decoder{b: body}
	out := make([]opResult, 0, len(ops))
	for {
		typ, done, code := d.int32(), d.bool(), d.int32()
		if d.err != nil {
			return nil, d.err
		}
		if done {
			break
		}
		if len(out) == len(ops) {
			return nil, fmt.Errorf("zookeeper multiRead answer: more than the %d results asked for", len(ops))
		}
		res, err := decodeResult(&d, typ, code, ops[len(out)])
		if err != nil {
			return nil, fmt.Errorf("zookeeper multiRead answer, result %d (%s): %w", len(out), ops[len(out)].path, err)
		}
		out = append(out, res)
	}
	if len(out) != len(ops) {
		return nil, fmt.Errorf("zookeeper multiRead answer: %d results for %d reads", len(out), len(ops))
	}
	return out, nil
}

// decodeResult decodes one op's record after its MultiHeader{typ, false, code}.
func decodeResult(d *decoder, typ, code int32, op readOp) (opResult, error) {
	want := opGetData
	if op.list {
		want = opGetChildren
	}
	switch typ {
	case opError:
		errCode := d.int32() // ErrorResponse repeats the header's code
		if d.err != nil {
			return opResult{}, d.err
		}
		if errCode != code || code == 0 {
			return opResult{}, fmt.Errorf("error result with codes %d and %d", code, errCode)
		}
		return opResult{err: codeError(code)}, nil
	case want:
	default:
		return opResult{}, fmt.Errorf("result of type %d for a read of type %d", typ, want)
	}
	if op.list {
		kids := d.strings()
		return opResult{children: kids}, d.err
	}
	data := d.buffer()
	stat := d.take(statLen)
	if d.err != nil {
		return opResult{}, d.err
	}
	return opResult{data: data, mtime: int64(binary.BigEndian.Uint64(stat[mtimeAt:]))}, nil
}

// codeError is the error go-zookeeper returns for a server's error code, for the codes a read
// can get; others are named by their number.
func codeError(code int32) error {
	switch zk.ErrCode(code) {
	case -101:
		return zk.ErrNoNode
	case -102:
		return zk.ErrNoAuth
	case -112:
		return zk.ErrSessionExpired
	case -118:
		return zk.ErrSessionMoved
	case -8:
		return zk.ErrBadArguments
	}
	return fmt.Errorf("zookeeper error code %d", code)
}

// decoder reads jute's big-endian records; the first short read sticks as err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = errShortReply
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) int32() int32 {
	if v := d.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (d *decoder) bool() bool {
	if v := d.take(1); v != nil {
		return v[0] != 0
	}
	return false
}

// buffer reads a jute buffer: length (-1: null) and bytes.
func (d *decoder) buffer() []byte {
	n := d.int32()
	if n < 0 {
		return nil
	}
	return d.take(int(n))
}

// strings reads a jute vector<ustring>: count (-1: null) and each string.
func (d *decoder) strings() []string {
	n := d.int32()
	if n < 0 || d.err != nil {
		return nil
	}
	if int(n) > len(d.b)/4 { // each string needs at least its length
		d.err = errShortReply
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		s := d.buffer()
		if d.err != nil {
			return nil
		}
		out = append(out, string(s))
	}
	return out
}
