package datadir

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/adler32"

	"github.com/klauspost/compress/snappy"
)

// jute writes ZooKeeper's jute encoding, for the small synthetic files of the fuzz seeds and
// the directories of the benchmarks.
type jute struct{ bytes.Buffer }

func (j *jute) int(v int32)  { j.Write(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (j *jute) long(v int64) { j.Write(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func (j *jute) buf(b string) { j.int(int32(len(b))); j.WriteString(b) }

// genNode is one znode of a synthetic snapshot.
type genNode struct {
	path, data          string
	czxid, mzxid, mtime int64
	owner, pzxid        int64
}

// genSnapshot encodes a snapshot of nodes (in pre-order, the root "" first), sealed as
// FileSnap writes it; with trailers, the 3.6+ digest and the 3.9 last-zxid trailers follow.
func genSnapshot(nodes []genNode, trailers bool) []byte {
	var j jute
	j.int(snapMagic)
	j.int(2)
	j.long(-1)
	j.int(1) // one session
	j.long(0x100)
	j.int(30000)
	j.int(1) // the ACL cache: world:anyone
	j.long(1)
	j.int(1)
	j.int(31)
	j.buf("world")
	j.buf("anyone")
	for _, n := range nodes {
		j.buf(n.path)
		j.buf(n.data)
		j.long(1)
		for _, v := range []int64{n.czxid, n.mzxid, n.mtime, n.mtime} {
			j.long(v)
		}
		j.int(0)
		j.int(0)
		j.int(0)
		j.long(n.owner)
		j.long(n.pzxid)
	}
	j.buf("/")
	seal := func() {
		j.long(int64(adler32.Checksum(j.Bytes())))
		j.buf("/")
	}
	seal()
	if trailers {
		j.long(nodes[len(nodes)-1].mzxid) // digest zxid, version 2, digest
		j.int(2)
		j.long(12345)
		seal()
		j.long(nodes[len(nodes)-1].mzxid) // last processed zxid
		seal()
	}
	return j.Bytes()
}

// gzipped and snappyJava compress a snapshot as ZooKeeper 3.6+ does.
func gzipped(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func snappyJava(b []byte) []byte {
	out := append([]byte(nil), snappyMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(b) > 0 {
		n := min(len(b), 32<<10)
		blk := snappy.Encode(nil, b[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		b = b[n:]
	}
	return out
}

// genTxn is one transaction of a synthetic log: its header and its encoded body.
type genTxn struct {
	session, zxid, time int64
	typ                 int32
	body                []byte
}

func txnCreate(path, data string, ephemeral bool) []byte {
	var j jute
	j.buf(path)
	j.buf(data)
	j.int(1)
	j.int(31)
	j.buf("world")
	j.buf("anyone")
	if ephemeral {
		j.WriteByte(1)
	} else {
		j.WriteByte(0)
	}
	j.int(1)
	return j.Bytes()
}

func txnSetData(path, data string) []byte {
	var j jute
	j.buf(path)
	j.buf(data)
	j.int(1)
	return j.Bytes()
}

func txnDelete(path string) []byte {
	var j jute
	j.buf(path)
	return j.Bytes()
}

// txnMulti encodes a MultiTxn of (type, body) operations.
func txnMulti(ops ...genTxn) []byte {
	var j jute
	j.int(int32(len(ops)))
	for _, o := range ops {
		j.int(o.typ)
		j.buf(string(o.body))
	}
	return j.Bytes()
}

// genLog encodes a transaction log: the file header, then each record with its Adler32 and
// end marker.
func genLog(txns []genTxn) []byte {
	var j jute
	j.int(logMagic)
	j.int(2)
	j.long(0)
	for _, t := range txns {
		var r jute
		r.long(t.session)
		r.int(1)
		r.long(t.zxid)
		r.long(t.time)
		r.int(t.typ)
		r.Write(t.body)
		j.long(int64(adler32.Checksum(r.Bytes())))
		j.int(int32(r.Len()))
		j.Write(r.Bytes())
		j.WriteByte('B')
	}
	return j.Bytes()
}

// seedTree is a small /legacy/consumers tree that touches each kind of znode the store keeps:
// valid, invalid and noted offsets, an ephemeral id and owner, a znode it never reads.
func seedTree() []genNode {
	const ms = 1_700_000_000_000
	var nodes []genNode
	z := int64(0)
	add := func(path, data string, owner int64) {
		z++
		nodes = append(nodes, genNode{path: path, data: data, czxid: z, mzxid: z, mtime: ms + z, owner: owner, pzxid: z})
	}
	add("", "", 0)
	add("/legacy", "", 0)
	add("/legacy/consumers", "", 0)
	add("/legacy/consumers/g", "", 0)
	add("/legacy/consumers/g/offsets", "", 0)
	add("/legacy/consumers/g/offsets/t", "", 0)
	add("/legacy/consumers/g/offsets/t/0", "42", 0)
	add("/legacy/consumers/g/offsets/t/1", " 7\n", 0)
	add("/legacy/consumers/g/offsets/t/07", "9", 0)
	add("/legacy/consumers/g/offsets/t/2", "-1", 0)
	add("/legacy/consumers/g/ids", "", 0)
	add("/legacy/consumers/g/ids/c1", `{"version":1}`, 0x100)
	add("/legacy/consumers/g/owners", "", 0)
	add("/legacy/consumers/g/owners/t", "", 0)
	add("/legacy/consumers/g/owners/t/0", "c1-0", 0x100)
	add("/legacy/consumers/g/other", "", 0)
	add("/zookeeper", "", 0)
	return nodes
}

// seedLog replays over seedTree: each transaction type the replay applies.
func seedLog() []byte {
	const ms = 1_700_000_001_000
	z := int64(len(seedTree()))
	var txns []genTxn
	add := func(session int64, typ int32, body []byte) {
		z++
		txns = append(txns, genTxn{session: session, zxid: z, time: ms + z, typ: typ, body: body})
	}
	add(0x200, opCreateSession, []byte{0, 0, 0x75, 0x30})
	add(0x200, opCreate, txnCreate("/legacy/consumers/g/offsets/t/3", "5", false))
	add(0x200, opSetData, txnSetData("/legacy/consumers/g/offsets/t/0", "43"))
	add(0x200, opSetData, txnSetData("/legacy/consumers/g/offsets/t/3", "x"))
	add(0x200, opDelete, txnDelete("/legacy/consumers/g/offsets/t/1"))
	add(0x200, opCreate, txnCreate("/legacy/consumers/g/ids/c2", "{}", true))
	add(0x200, opMulti, txnMulti(
		genTxn{typ: opCreate, body: txnCreate("/legacy/consumers/g/offsets/u", "", false)},
		genTxn{typ: opCreate, body: txnCreate("/legacy/consumers/g/offsets/u/0", "1", false)},
		genTxn{typ: opSetData, body: txnSetData("/legacy/consumers/g/offsets/t/0", "44")},
	))
	add(0x200, opError, []byte{0, 0, 0, 0xff})
	add(0x100, opCloseSession, nil)
	add(0x200, opCloseSession, nil)
	return genLog(txns)
}
