package datadir

import (
	"slices"
	"sort"
)

// partSet holds the compact offset znodes of one topic, sorted by partition: stride words each,
// (partition, offset - base[0], mtime - base[1]) while every value lies within 4 Gi of its
// base (12 bytes a znode), else (partition, offset, mtime) with both as two words (20 bytes).
type partSet struct {
	w      []uint32
	base   [2]int64
	stride int
}

const (
	narrowStride = 3
	wideStride   = 5
)

func (s *partSet) len() int {
	if s.stride == 0 {
		return 0
	}
	return len(s.w) / s.stride
}

func (s *partSet) part(i int) int32 { return int32(s.w[i*s.stride]) }

// get returns the offset and mtime of the i-th znode.
func (s *partSet) get(i int) (off, mtime int64) {
	e := s.w[i*s.stride:]
	if s.stride == narrowStride {
		return s.base[0] + int64(e[1]), s.base[1] + int64(e[2])
	}
	return int64(uint64(e[1])<<32 | uint64(e[2])), int64(uint64(e[3])<<32 | uint64(e[4]))
}

// find is the index of partition p, or where it would go.
func (s *partSet) find(p int32) (int, bool) {
	n := s.len()
	i := sort.Search(n, func(i int) bool { return s.part(i) >= p })
	return i, i < n && s.part(i) == p
}

// center is a base that puts v in the middle of the narrow range.
func center(v int64) int64 {
	const half = 1 << 31
	if v < -1<<63+half {
		return -1 << 63
	}
	return v - half
}

// fits reports whether v is within the narrow range of base.
func fits(v, base int64) bool { return v >= base && uint64(v)-uint64(base) <= 1<<32-1 }

// encode writes one znode's words into e.
func (s *partSet) encode(e []uint32, p int32, off, mtime int64) {
	e[0] = uint32(p)
	if s.stride == narrowStride {
		e[1], e[2] = uint32(uint64(off)-uint64(s.base[0])), uint32(uint64(mtime)-uint64(s.base[1]))
		return
	}
	e[1], e[2] = uint32(uint64(off)>>32), uint32(off)
	e[3], e[4] = uint32(uint64(mtime)>>32), uint32(mtime)
}

// room makes (off, mtime) storable: the first znode sets the bases, a value outside them
// widens every znode of the topic.
func (s *partSet) room(off, mtime int64) {
	if s.len() == 0 {
		s.w, s.stride, s.base = s.w[:0], narrowStride, [2]int64{center(off), center(mtime)}
		return
	}
	if s.stride == wideStride || (fits(off, s.base[0]) && fits(mtime, s.base[1])) {
		return
	}
	n := s.len()
	wide := &partSet{w: make([]uint32, n*wideStride, (n+1)*wideStride), stride: wideStride}
	for i := range n {
		o, m := s.get(i)
		wide.encode(wide.w[i*wideStride:], s.part(i), o, m)
	}
	*s = *wide
}

// insert adds partition p, which is not there.
func (s *partSet) insert(p int32, off, mtime int64) {
	s.room(off, mtime)
	i, _ := s.find(p)
	var e [wideStride]uint32
	s.encode(e[:], p, off, mtime)
	s.w = slices.Insert(s.w, i*s.stride, e[:s.stride]...)
}

// set replaces the offset and mtime of the i-th znode.
func (s *partSet) set(i int, off, mtime int64) {
	p := s.part(i)
	s.room(off, mtime)
	s.encode(s.w[i*s.stride:], p, off, mtime)
}

// remove takes out the i-th znode.
func (s *partSet) remove(i int) {
	s.w = slices.Delete(s.w, i*s.stride, (i+1)*s.stride)
}

func (s *partSet) trim() {
	if cap(s.w) > len(s.w) {
		s.w = slices.Clone(s.w)
	}
}
