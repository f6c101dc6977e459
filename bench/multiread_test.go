package bench_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// BenchmarkMultiRead measures what ZooKeeper's multiRead (opcode 22, ZooKeeper 3.6+: many reads
// in one request, each with its own result) would save the offset reads, which go-zookeeper
// cannot send: its Multi takes write operations only. It reads the seeded tree's offset znodes
// four ways, in rotating order: go-zookeeper's Gets (the raw reader), single getData requests
// over the minimal client below (the same work, to show the client is not the difference),
// and multiReads of 10 and of 100 znodes (a topic's partitions, a group's). Each reports its
// median pass time and ZooKeeper's CPU per offset. Before timing, the client's answers for the
// first 100 znodes (one multiRead, then single requests) are checked against go-zookeeper's
// Gets; while timing, every answer must carry as many znodes as its request asked for.
//
// A probe for a decision, not a reader: the client below has no auth, no chroot, no pings
// (a pass must come within the session timeout of the last) and no reconnect, and its pool is
// not swept (8 sessions; 128 single requests, 16 multiReads of 10 or 4 of 100 outstanding on
// each, against the raw reader's 16 sessions and 1024 Gets).
//
//	ZK2KAFKA_STACK_ENV=.stack/run/zk/stack.env ZK2KAFKA_BENCH_SIZES=100000 \
//	  go test -run '^$' -bench MultiRead -benchtime 1x -v ./bench/
func BenchmarkMultiRead(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(sizeName(n), func(b *testing.B) { benchMultiRead(b, n) })
	}
}

func benchMultiRead(b *testing.B, n int) {
	f := newFixture(b, n)
	paths := f.offsetPaths()
	addr, _, _ := strings.Cut(f.stack.ZK, ",")
	var sessions []*readSession
	for range 8 {
		s, err := dialReadSession(addr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.conn.Close() })
		sessions = append(sessions, s)
	}
	pool, err := poolSetting{16, 1024, true}.dial(f.stack.ZK)
	if err != nil {
		b.Fatal(err)
	}
	defer closePool(pool)
	checkMultiRead(b, sessions[0], pool[0], paths)

	singles, tens, hundreds := batchesOf(paths, 1), batchesOf(paths, 10), batchesOf(paths, 100)
	ways := []struct {
		name string
		pass func() error
	}{
		{"go-zookeeper Get", func() error { return rawFetch(pool, 1024, paths) }},
		{"single getData", func() error { return readBatches(sessions, 128, singles, false) }},
		{"multiRead of 10", func() error { return readBatches(sessions, 16, tens, true) }},
		{"multiRead of 100", func() error { return readBatches(sessions, 4, hundreds, true) }},
	}
	times := make([][]float64, len(ways))
	serverCPUs := make([]time.Duration, len(ways))
	rounds := envLimit(b, EnvPairs, defaultPairs)
	for b.Loop() {
		for r := range rounds {
			for k := range ways {
				i := (k + r) % len(ways)
				z0, ok0 := serverCPU(f.stack)
				start := time.Now()
				if err := ways[i].pass(); err != nil {
					b.Fatalf("%s: %v", ways[i].name, err)
				}
				times[i] = append(times[i], time.Since(start).Seconds())
				if z1, ok1 := serverCPU(f.stack); ok0 && ok1 {
					serverCPUs[i] += z1 - z0
				}
			}
		}
	}
	for i, w := range ways {
		passes := len(times[i])
		b.Logf("MULTIREAD offsets=%d %-17s median %s of %d passes, zookeeper CPU %.2f us per offset", n, w.name,
			time.Duration(median(times[i])*float64(time.Second)).Round(100*time.Microsecond), passes,
			float64(serverCPUs[i].Microseconds())/float64(passes*len(paths)))
	}
}

// checkMultiRead fails unless a multiRead and single getData requests of the first znodes
// return what go-zookeeper's Gets do: a probe that decoded the wrong bytes would time nothing.
func checkMultiRead(b *testing.B, s *readSession, c *zk.Conn, paths []string) {
	b.Helper()
	sample := paths[:min(len(paths), 100)]
	var got [][]byte
	for _, multi := range []bool{true, false} {
		batches := [][]string{sample}
		if !multi {
			batches = batchesOf(sample, 1)
		}
		var req []byte
		for i, batch := range batches {
			req = appendRead(req, int32(i+1), batch, multi)
		}
		if _, err := s.conn.Write(req); err != nil {
			b.Fatal(err)
		}
		for _, batch := range batches {
			resp, err := s.frame()
			if err != nil {
				b.Fatal(err)
			}
			data, err := decodeRead(resp, multi)
			if err != nil || len(data) != len(batch) {
				b.Fatalf("read of %d znodes from %s (multi %v): %d answers, %v", len(batch), batch[0], multi, len(data), err)
			}
			got = append(got, data...)
		}
	}
	for i, p := range append(slices.Clone(sample), sample...) {
		want, _, err := c.Get(p)
		if err != nil {
			b.Fatal(err)
		}
		if string(got[i]) != string(want) {
			b.Fatalf("%s: our client read %q, go-zookeeper %q", p, got[i], want)
		}
	}
}

// batchesOf cuts paths into batches of size.
func batchesOf(paths []string, size int) [][]string {
	var out [][]string
	for i := 0; i < len(paths); i += size {
		out = append(out, paths[i:min(i+size, len(paths))])
	}
	return out
}

// readSession is one ZooKeeper session of a minimal pipelined read client.
type readSession struct {
	conn net.Conn
	r    *bufio.Reader
}

// ZooKeeper protocol constants (org.apache.zookeeper.ZooDefs.OpCode, jute records).
const (
	opGetData   = 4
	opMultiRead = 22
	opMultiEnd  = -1 // MultiHeader type of the record that ends a multi
	statBytes   = 68 // czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid
)

func dialReadSession(addr string) (*readSession, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	// ConnectRequest: protocol version, last zxid seen, timeout (ms), session id, password, read-only.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 40000)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = appendBuffer(req, make([]byte, 16))
	req = append(req, 0)
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(req))), req...)); err != nil {
		c.Close()
		return nil, err
	}
	s := &readSession{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
	if _, err := s.frame(); err != nil {
		c.Close()
		return nil, fmt.Errorf("zookeeper handshake with %s: %w", addr, err)
	}
	return s, nil
}

// frame reads one length-prefixed frame.
func (s *readSession) frame() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(s.r, h[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(h[:]))
	_, err := io.ReadFull(s.r, buf)
	return buf, err
}

func appendBuffer(b, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// appendRead appends one framed request: a getData of paths[0], or a multiRead of getData ops.
func appendRead(b []byte, xid int32, paths []string, multi bool) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, 0) // the frame's length, set below
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	if !multi {
		b = binary.BigEndian.AppendUint32(b, opGetData)
		b = appendBuffer(b, []byte(paths[0]))
		b = append(b, 0) // no watch
	} else {
		b = binary.BigEndian.AppendUint32(b, opMultiRead)
		for _, p := range paths {
			b = appendMultiHeader(b, opGetData, false)
			b = appendBuffer(b, []byte(p))
			b = append(b, 0)
		}
		b = appendMultiHeader(b, opMultiEnd, true)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// appendMultiHeader appends a jute MultiHeader: type, done, err (-1 in requests).
func appendMultiHeader(b []byte, typ int32, done bool) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	if done {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, 0xffffffff)
}

// decodeRead returns the data of each znode an answer carries, in request order.
func decodeRead(resp []byte, multi bool) ([][]byte, error) {
	if len(resp) < 16 {
		return nil, errors.New("short reply header")
	}
	if e := int32(binary.BigEndian.Uint32(resp[12:])); e != 0 { // ReplyHeader: xid, zxid, err
		return nil, fmt.Errorf("zookeeper error %d", e)
	}
	body := resp[16:]
	data := func() ([]byte, error) {
		if len(body) < 4 {
			return nil, errors.New("short data")
		}
		l := max(int(int32(binary.BigEndian.Uint32(body))), 0)
		if len(body) < 4+l+statBytes {
			return nil, errors.New("short data or stat")
		}
		d := body[4 : 4+l]
		body = body[4+l+statBytes:]
		return d, nil
	}
	if !multi {
		d, err := data()
		return [][]byte{d}, err
	}
	var out [][]byte
	for {
		if len(body) < 9 {
			return out, errors.New("short multi header")
		}
		typ, done, e := int32(binary.BigEndian.Uint32(body)), body[4] == 1, int32(binary.BigEndian.Uint32(body[5:]))
		body = body[9:]
		switch {
		case done:
			return out, nil
		case typ != opGetData:
			return out, fmt.Errorf("multiRead result %d: type %d, error %d", len(out), typ, e)
		}
		d, err := data()
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
}

// readBatches reads every batch over the sessions, window requests outstanding on each: a
// writer sends as many as the window allows in one write, a reader takes the answers (in
// order: ZooKeeper answers a session's requests in the order sent) and checks their count.
func readBatches(sessions []*readSession, window int, batches [][]string, multi bool) error {
	var (
		wg   sync.WaitGroup
		once sync.Once
		fail error
		done = make(chan struct{})
	)
	stop := func(err error) { once.Do(func() { fail = err; close(done) }) }
	for si, s := range sessions {
		var mine [][]string
		for i := si; i < len(batches); i += len(sessions) {
			mine = append(mine, batches[i])
		}
		slots := make(chan struct{}, window)
		wg.Go(func() {
			var buf []byte
			for i := 0; i < len(mine); {
				select {
				case slots <- struct{}{}:
				case <-done:
					return
				}
				buf = appendRead(buf[:0], int32(i+1), mine[i], multi)
				for i++; i < len(mine) && len(slots) < cap(slots); i++ {
					slots <- struct{}{}
					buf = appendRead(buf, int32(i+1), mine[i], multi)
				}
				if _, err := s.conn.Write(buf); err != nil {
					stop(err)
					return
				}
			}
		})
		wg.Go(func() {
			for i, batch := range mine {
				resp, err := s.frame()
				if err == nil {
					var got [][]byte
					if got, err = decodeRead(resp, multi); err == nil && len(got) != len(batch) {
						err = fmt.Errorf("%d answers for %d znodes from %s on", len(got), len(batch), batch[0])
					}
				}
				if err != nil {
					stop(fmt.Errorf("batch %d: %w", i, err))
					s.conn.Close() // the session is unusable: its answers are out of step
					return
				}
				<-slots
			}
		})
	}
	wg.Wait()
	return fail
}
