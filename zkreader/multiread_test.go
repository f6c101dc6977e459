package zkreader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

// answer builds a multiRead answer body as MultiResponse.serialize writes it.
type answer []byte

func (a answer) header(typ int32, done bool, code int32) answer {
	b := binary.BigEndian.AppendUint32(a, uint32(typ))
	if done {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

func (a answer) data(d string, mtime int64) answer {
	b := a.header(opGetData, false, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
	b = append(b, d...)
	stat := make([]byte, statLen)
	binary.BigEndian.PutUint64(stat[mtimeAt:], uint64(mtime))
	return append(b, stat...)
}

func (a answer) nullData(mtime int64) answer {
	b := a.header(opGetData, false, 0)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	stat := make([]byte, statLen)
	binary.BigEndian.PutUint64(stat[mtimeAt:], uint64(mtime))
	return append(b, stat...)
}

func (a answer) children(names ...string) answer {
	b := a.header(opGetChildren, false, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(names)))
	for _, n := range names {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	return b
}

func (a answer) failed(code int32) answer {
	return binary.BigEndian.AppendUint32(a.header(opError, false, code), uint32(code))
}

func (a answer) end() answer { return a.header(opError, true, -1) }

func TestDecodeMultiRead(t *testing.T) {
	get := func(p string) readOp { return readOp{path: p} }
	list := func(p string) readOp { return readOp{path: p, list: true} }
	cases := []struct {
		name string
		ops  []readOp
		body answer
		want []opResult
		err  string
	}{
		{"data and listing", []readOp{get("/a"), list("/b")}, answer{}.data("42", 7).children("x", "y").end(),
			[]opResult{{data: []byte("42"), mtime: 7}, {children: []string{"x", "y"}}}, ""},
		{"null data, empty listing", []readOp{get("/a"), list("/b")}, answer{}.nullData(9).children().end(),
			[]opResult{{mtime: 9}, {children: []string{}}}, ""},
		{"a deleted znode fails alone", []readOp{get("/a"), get("/gone"), get("/c")},
			answer{}.data("1", 1).failed(-101).data("3", 3).end(),
			[]opResult{{data: []byte("1"), mtime: 1}, {err: zk.ErrNoNode}, {data: []byte("3"), mtime: 3}}, ""},
		{"a denied listing", []readOp{list("/secret")}, answer{}.failed(-102).end(), []opResult{{err: zk.ErrNoAuth}}, ""},
		{"fewer results than reads", []readOp{get("/a"), get("/b")}, answer{}.data("1", 1).end(), nil, "1 results for 2 reads"},
		{"more results than reads", []readOp{get("/a")}, answer{}.data("1", 1).data("2", 2).end(), nil, "more than the 1 results"},
		{"no end header", []readOp{get("/a")}, answer{}.data("1", 1), nil, "cut short"},
		{"cut in a stat", []readOp{get("/a")}, answer{}.data("1", 1)[:20], nil, "cut short"},
		{"cut in a name", []readOp{list("/a")}, answer{}.children("abcdef")[:18], nil, "cut short"},
		{"a listing where data was asked", []readOp{get("/a")}, answer{}.children("x").end(), nil, "type 8 for a read of type 4"},
		{"an error result without a code", []readOp{get("/a")}, answer{}.failed(0).end(), nil, "error result"},
		{"a huge child count", []readOp{list("/a")}, answer{}.header(opGetChildren, false, 0).end()[:13], nil, "cut short"},
		{"empty", []readOp{get("/a")}, answer{}, nil, "cut short"},
	}
	t.Run("an unknown code keeps its number", func(t *testing.T) {
		got, err := decodeMultiRead(answer{}.failed(-999).end(), []readOp{get("/a")})
		if err != nil || len(got) != 1 || got[0].err == nil || !strings.Contains(got[0].err.Error(), "code -999") {
			t.Fatalf("decode = %+v, %v; want one result failed with code -999", got, err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeMultiRead(c.body, c.ops)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("decode = %+v, %v; want an error with %q", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.want {
				if !errors.Is(got[i].err, c.want[i].err) || (got[i].err == nil) != (c.want[i].err == nil) {
					t.Errorf("result %d: err %v, want %v", i, got[i].err, c.want[i].err)
				}
				got[i].err, c.want[i].err = nil, nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("decode = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestAppendMultiRead checks the request against MultiOperationRecord.serialize: a header
// {type, false, -1} and {path, watch false} per op, then {-1, true, -1}.
func TestAppendMultiRead(t *testing.T) {
	got := appendMultiRead(nil, []readOp{{path: "/a"}, {path: "/bc", list: true}})
	want := []byte{
		0, 0, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, '/', 'a', 0,
		0, 0, 0, 8, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 3, '/', 'b', 'c', 0,
		0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("request\n got %v\nwant %v", got, want)
	}
}

func TestParseSrvr(t *testing.T) {
	cases := []struct {
		answer       string
		major, minor int
		ok, multi    bool
	}{
		{"Zookeeper version: 3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC\nLatency min/avg/max: 0/0.0/0\n", 3, 8, true, true},
		{"Zookeeper version: 3.6.0--1, built on 02/25/2020 14:38 GMT\n", 3, 6, true, true},
		{"Zookeeper version: 3.5.10-c5d0e5e2d8b6d2a6a7c1d2b6e4e7d6d0e5e2d8b6, built on 05/25/2022\n", 3, 5, true, false},
		{"Zookeeper version: 3.4.14-4c25d480e66aadd371de8bd2fd8da255ac140bcf, built on 03/06/2019 16:18 GMT\n", 3, 4, true, false},
		{"Zookeeper version: 4.0.0, built on 2030\n", 4, 0, true, true},
		{"srvr is not executed because it is not in the whitelist.\n", 0, 0, false, false},
		{"", 0, 0, false, false},
		{"This ZooKeeper instance is not currently serving requests\n", 0, 0, false, false},
	}
	for _, c := range cases {
		major, minor, ok := parseSrvr(c.answer)
		if major != c.major || minor != c.minor || ok != c.ok || (ok && hasMultiRead(major, minor)) != c.multi {
			t.Errorf("parseSrvr(%.40q) = %d.%d %v (multiRead %v), want %d.%d %v (multiRead %v)", c.answer,
				major, minor, ok, ok && hasMultiRead(major, minor), c.major, c.minor, c.ok, c.multi)
		}
	}
}

// TestDetectReadPath: multiRead only when every server of the connect string says 3.6 or later;
// an older one, one that will not say (srvr not whitelisted, no answer), or one that cannot be
// reached keeps the single requests.
func TestDetectReadPath(t *testing.T) {
	srvr := func(answer string) string {
		return stacktest.Serve(t, func(c net.Conn) {
			defer c.Close()
			word := make([]byte, 4)
			if _, err := io.ReadFull(c, word); err != nil || string(word) != "srvr" {
				return
			}
			_, _ = c.Write([]byte(answer)) // the client's read shows a failed write
		})
	}
	silent := stacktest.Serve(t, func(c net.Conn) {
		defer c.Close()
		_, _ = io.Copy(io.Discard, c) // until the client gives up
	})
	v38, v35 := srvr("Zookeeper version: 3.8.4-abc, built on 2024\nMode: standalone\n"), srvr("Zookeeper version: 3.5.10-abc, built on 2022\n")
	hidden := srvr("srvr is not executed because it is not in the whitelist.\n")
	cases := []struct {
		name  string
		hosts []string
		multi bool
	}{
		{"one 3.8", []string{v38}, true},
		{"two 3.8", []string{v38, srvr("Zookeeper version: 3.9.3-x, built on 2024\n")}, true},
		{"3.8 and 3.5", []string{v38, v35}, false},
		{"srvr not whitelisted", []string{v38, hidden}, false},
		{"a server down", []string{v38, stacktest.ClosedPort(t)}, false},
		{"a server that does not answer", []string{v38, silent}, false},
		{"a name that does not resolve", []string{v38, "no-such-host.invalid:2181"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := detectReadPath(context.Background(), c.hosts, 2*time.Second, nil)
			if got.multi != c.multi || got.reason == "" {
				t.Fatalf("detectReadPath(%v) = %+v, want multiRead %v and a reason", c.hosts, got, c.multi)
			}
		})
	}
}

// TestConnLost: the failures a single read is sent again after are those of its connection,
// never an answer about the znode, nor the Reader's own close.
func TestConnLost(t *testing.T) {
	sendErr := fmt.Errorf("%w (and closing: %v)", &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}, net.ErrClosed)
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{zk.ErrNoNode, false},
		{zk.ErrNoAuth, false},
		{zk.ErrClosing, false},
		{errors.New("zookeeper error 7"), false},
		{zk.ErrConnectionClosed, true},
		{zk.ErrNoServer, true},
		{sendErr, true},
		{fmt.Errorf("read: %w", net.ErrClosed), true},
	} {
		if got := connLost(tc.err); got != tc.want {
			t.Errorf("connLost(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
