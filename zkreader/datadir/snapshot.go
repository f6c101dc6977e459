package datadir

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
)

// Magic numbers of ZooKeeper's FileHeader: "ZKSN" for a snapshot, "ZKLG" for a txn log.
const (
	snapMagic = 0x5a4b534e
	logMagic  = 0x5a4b4c47
)

// snapInfo is what loading a snapshot found besides the tree.
type snapInfo struct {
	// digestZxid and lastZxid are the trailers of 3.6+ (the zxid of the tree digest) and of
	// 3.9+ (the last processed zxid when the snapshot was finished); 0 when absent.
	digestZxid, lastZxid int64
	// newestMtime is the newest mtime of a kept znode: the age of the offsets when no
	// transaction is replayed after the snapshot.
	newestMtime int64
}

// openSnapshot opens a snapshot file for reading, through gunzip or snappy-java's stream
// decoder for the .gz and .snappy files of ZooKeeper 3.6+ (zookeeper.snapshot.compression.method).
func openSnapshot(path string) (*juteReader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	j, err := snapshotReader(path, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return j, f, nil
}

// snapshotReader decodes the snapshot file named name from r, by its name's suffix.
func snapshotReader(name string, r io.Reader) (*juteReader, error) {
	switch {
	case strings.HasSuffix(name, ".gz"):
		zr, err := gzip.NewReader(bufio.NewReaderSize(r, 256<<10))
		if err != nil {
			return nil, &FormatError{File: name, Offset: 0, Reason: "not a gzip file: " + err.Error()}
		}
		zr.Multistream(false)
		return newJuteReader(name, " of the decompressed stream", zr, true), nil
	case strings.HasSuffix(name, ".snappy"):
		return newJuteReader(name, " of the decompressed stream", newSnappyJavaReader(name, bufio.NewReaderSize(r, 256<<10)), true), nil
	default:
		return newJuteReader(name, "", r, true), nil
	}
}

// loadSnapshot reads a snapshot into t: FileHeader, the sessions, the ACL cache, the znodes
// in pre-order until the "/" that ends them, then the Adler32 seal (checksum long, "/"), then
// the optional digest and last-processed-zxid trailers, each followed by its own seal. The
// layout is FileSnap.serialize, SerializeUtils.serializeSnapshot and DataTree.serialize of
// ZooKeeper 3.4 to 3.9.
func loadSnapshot(path string, t *tree) (snapInfo, error) {
	j, c, err := openSnapshot(path)
	if err != nil {
		return snapInfo{}, err
	}
	defer c.Close()
	return parseSnapshot(j, t)
}

// parseSnapshot reads a whole snapshot stream into t.
func parseSnapshot(j *juteReader, t *tree) (snapInfo, error) {
	var info snapInfo
	off := j.offset()
	magic, err := j.readInt("the file header")
	if err != nil {
		return info, err
	}
	if magic != snapMagic {
		return info, j.corrupt(off, "magic %#x is not a snapshot's (%#x, \"ZKSN\")", uint32(magic), snapMagic)
	}
	if _, err := j.readInt("the file header version"); err != nil {
		return info, err
	}
	if _, err := j.readLong("the file header dbid"); err != nil {
		return info, err
	}
	// Sessions: they matter only through their ephemerals, which carry their owner.
	off = j.offset()
	n, err := j.readInt("the session count")
	if err != nil {
		return info, err
	}
	if n < 0 {
		return info, j.corrupt(off, "session count %d is negative", n)
	}
	for range n {
		if _, err := j.readLong("a session id"); err != nil {
			return info, err
		}
		if _, err := j.readInt("a session timeout"); err != nil {
			return info, err
		}
	}
	// The ACL cache (ReferenceCountedACLCache.serialize; a plain map in 3.4): count, then
	// {long id, vector<ACL>}. Files are read with the directory's permissions, not ACLs.
	off = j.offset()
	n, err = j.readInt("the ACL cache size")
	if err != nil {
		return info, err
	}
	if n < 0 {
		return info, j.corrupt(off, "ACL cache size %d is negative", n)
	}
	for range n {
		if _, err := j.readLong("an ACL cache id"); err != nil {
			return info, err
		}
		if err := j.skipACLs("an ACL list"); err != nil {
			return info, err
		}
	}
	if err := loadNodes(j, t, &info); err != nil {
		return info, err
	}
	if err := checkSeal(j); err != nil {
		return info, err
	}
	return info, readTrailers(j, &info)
}

// loadNodes reads (path, DataNode) pairs until the path "/" that ends them (the root itself is
// stored under ""). A DataNode is its data buffer, its ACL cache id and its StatPersisted.
func loadNodes(j *juteReader, t *tree, info *snapInfo) error {
	var scratch, scratchData []byte
	for {
		off := j.offset()
		p, err := j.readBuffer("a znode path")
		if err != nil {
			return err
		}
		if len(p) == 1 && p[0] == '/' {
			return nil
		}
		rel := t.classify(p)
		var path string
		switch rel {
		case kept:
			// p aliases the reader's buffer, which the next read may move: a copy into scratch
			// space; the tree copies only what it keeps.
			scratch = append(scratch[:0], p...)
		case isChroot, isParent:
			path = string(p)
		}
		data, err := j.readBuffer("the data of a znode")
		if err != nil {
			return err
		}
		if rel == kept {
			scratchData = append(scratchData[:0], data...) // data aliases the reader's buffer
		}
		var st [9]int64 // czxid mzxid ctime mtime (version cversion aversion) owner pzxid
		if _, err := j.readLong("the ACL id of a znode"); err != nil {
			return err
		}
		for i, w := range statFields {
			if w == 4 {
				v, err := j.readInt("the stat of a znode")
				st[i] = int64(v)
				if err != nil {
					return err
				}
				continue
			}
			if st[i], err = j.readLong("the stat of a znode"); err != nil {
				return err
			}
		}
		czxid, mzxid, mtime, owner, pzxid := st[0], st[1], st[3], st[7], st[8]
		switch rel {
		case kept:
			if err := t.createFromSnapshot(scratch, scratchData, mtime, owner); err != nil {
				return j.corrupt(off, "%v", err)
			}
			info.newestMtime = max(info.newestMtime, mtime)
			t.maxZxid = max(t.maxZxid, czxid, mzxid, pzxid)
		case isChroot:
			t.chrootExists = true
			if t.parentOfRoot() == path {
				t.maxZxid = max(t.maxZxid, pzxid)
			}
		case isParent:
			t.maxZxid = max(t.maxZxid, pzxid)
		}
	}
}

// statFields is the width of each StatPersisted field: czxid, mzxid, ctime, mtime, version,
// cversion, aversion, ephemeralOwner, pzxid.
var statFields = [9]int{8, 8, 8, 8, 4, 4, 4, 8, 8}

// checkSeal reads one seal (SnapStream.sealStream): the Adler32 of everything before it as a
// long, then the string "/".
func checkSeal(j *juteReader) error {
	want := j.checksum()
	off := j.offset()
	got, err := j.readLong("the checksum")
	if err != nil {
		return err
	}
	if uint64(got) != uint64(want) && !j.unchecked {
		return j.corrupt(off, "checksum mismatch: the file says %#x, its content sums to %#x (Adler32)", uint64(got), want)
	}
	off = j.offset()
	s, err := j.readBuffer("the seal")
	if err != nil {
		return err
	}
	if string(s) != "/" {
		return j.corrupt(off, "the seal after the checksum is %q, not \"/\"", s)
	}
	return nil
}

// readTrailers reads what ZooKeeper 3.6+ writes after the first seal, each followed by its
// own seal: the digest (ZxidDigest: long zxid, int version, then a long, or a hex string
// before version 2) when digests are enabled, then in 3.9+ the last processed zxid (a long).
// Neither is announced, and each may be disabled alone, so the reader tells them apart by
// their sizes: it reads what is left (a few dozen bytes) and parses the layout that fits.
func readTrailers(j *juteReader, info *snapInfo) error {
	start := j.offset()
	sum := j.checksum()
	var rest []byte
	for j.fill(1) {
		rest = append(rest, j.buf[j.r:j.w]...)
		j.r = j.w
		if len(rest) > 4096 {
			return j.corrupt(start, "more than 4 KiB after the snapshot's seal: not a trailer ZooKeeper writes")
		}
	}
	if j.srcErr != nil {
		return j.truncated(j.offset(), "the trailer")
	}
	t := &trailer{j: j, start: start, b: rest, sum: sum}
	if len(t.b) == 0 {
		return nil // 3.4, 3.5, or digests and the last-zxid trailer disabled
	}
	if len(t.b) != lastZxidTrailer {
		zxid, err := t.long("the digest zxid")
		if err != nil {
			return err
		}
		ver, err := t.int("the digest version")
		if err != nil {
			return err
		}
		if ver < 2 {
			if _, err := t.str("the digest"); err != nil {
				return err
			}
		} else if _, err := t.long("the digest"); err != nil {
			return err
		}
		if err := t.seal(); err != nil {
			return err
		}
		info.digestZxid = zxid
		if t.pos == len(t.b) {
			return nil
		}
		if len(t.b)-t.pos != lastZxidTrailer {
			return j.corrupt(start+int64(t.pos), "%d bytes after the digest's seal: not the last-zxid trailer (%d bytes)", len(t.b)-t.pos, lastZxidTrailer)
		}
	}
	zxid, err := t.long("the last processed zxid")
	if err != nil {
		return err
	}
	if err := t.seal(); err != nil {
		return err
	}
	info.lastZxid = zxid
	return nil
}

// lastZxidTrailer is the size of 3.9's last-processed-zxid trailer: a long and a seal.
const lastZxidTrailer = 8 + 8 + 4 + 1

// trailer decodes the few bytes after a snapshot's first seal, keeping the running Adler32
// the later seals check.
type trailer struct {
	j     *juteReader
	start int64
	b     []byte
	pos   int
	sum   uint32 // Adler32 of the stream up to b[pos]
}

func (t *trailer) take(n int, what string) ([]byte, error) {
	if len(t.b)-t.pos < n {
		return nil, &FormatError{File: t.j.file, Offset: t.start + int64(t.pos), Where: t.j.where, Reason: "file ends inside " + what, err: errTruncated}
	}
	b := t.b[t.pos : t.pos+n]
	t.pos += n
	t.sum = adlerUpdate(t.sum, b)
	return b, nil
}

func (t *trailer) long(what string) (int64, error) {
	b, err := t.take(8, what)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return int64(v), nil
}

func (t *trailer) int(what string) (int32, error) {
	b, err := t.take(4, what)
	if err != nil {
		return 0, err
	}
	return int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])), nil
}

func (t *trailer) str(what string) ([]byte, error) {
	off := t.start + int64(t.pos)
	n, err := t.int(what + " length")
	if err != nil {
		return nil, err
	}
	if n == -1 {
		return nil, nil
	}
	if n < 0 || int(n) > len(t.b) {
		return nil, t.j.corrupt(off, "%s length %d is impossible", what, n)
	}
	return t.take(int(n), what)
}

func (t *trailer) seal() error {
	want := t.sum
	off := t.start + int64(t.pos)
	got, err := t.long("a checksum")
	if err != nil {
		return err
	}
	if uint64(got) != uint64(want) && !t.j.unchecked {
		return t.j.corrupt(off, "checksum mismatch: the file says %#x, its content sums to %#x (Adler32)", uint64(got), want)
	}
	off = t.start + int64(t.pos)
	s, err := t.str("a seal")
	if err != nil {
		return err
	}
	if string(s) != "/" {
		return t.j.corrupt(off, "the seal after the checksum is %q, not \"/\"", s)
	}
	return nil
}

// adlerUpdate continues an Adler32 sum over b (hash/adler32 cannot resume from a value).
func adlerUpdate(sum uint32, b []byte) uint32 {
	const mod = 65521
	a, s := sum&0xffff, sum>>16
	for _, c := range b {
		a = (a + uint32(c)) % mod
		s = (s + a) % mod
	}
	return s<<16 | a
}
