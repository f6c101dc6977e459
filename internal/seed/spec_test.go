package seed

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestOffsetDeterministicAndInRange(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"no records", Spec{Seed: 1, Groups: 3, TopicsPerGroup: 2, Topics: 3, Partitions: 4, Records: 0}},
		{"one record", Spec{Seed: 2, Groups: 20, TopicsPerGroup: 3, Topics: 5, Partitions: 8, Records: 1}},
		{"many records", Spec{Seed: -7, Groups: 50, TopicsPerGroup: 10, Topics: 10, Partitions: 10, Records: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec.WithDefaults()
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			first := map[migrate.Key]int64{}
			seen := map[int64]bool{}
			s.Each(func(k migrate.Key, off int64) bool {
				if off < 0 || off > int64(s.Records) {
					t.Errorf("%s: offset %d outside [0, %d]", k, off, s.Records)
				}
				if _, dup := first[k]; dup {
					t.Errorf("%s: emitted twice", k)
				}
				first[k] = off
				seen[off] = true
				return true
			})
			if len(first) != s.Offsets() {
				t.Fatalf("Each gave %d offsets, Offsets() says %d", len(first), s.Offsets())
			}
			again := s // a fresh copy recomputes everything from the seed alone
			again.Each(func(k migrate.Key, off int64) bool {
				if first[k] != off {
					t.Errorf("%s: second pass %d, first %d", k, off, first[k])
				}
				return true
			})
			// The values must cover the range's ends, or tests would miss the boundary cases.
			if s.Records <= 1 && s.Offsets() >= 100 && (!seen[0] || !seen[int64(s.Records)]) {
				t.Errorf("with %d offsets in [0, %d], saw only %v", s.Offsets(), s.Records, seen)
			}
			if s.Records > 1 && len(seen) < 100 {
				t.Errorf("only %d distinct offsets among %d: not spread over [0, %d]", len(seen), s.Offsets(), s.Records)
			}
		})
	}
}

func TestOffsetDependsOnSeed(t *testing.T) {
	a := Spec{Seed: 1, Groups: 10, TopicsPerGroup: 2, Topics: 2, Partitions: 10, Records: 1 << 30}.WithDefaults()
	b := a
	b.Seed = 2
	same := 0
	a.Each(func(k migrate.Key, off int64) bool {
		if got, _ := b.Expected(k); got == off {
			same++
		}
		return true
	})
	if same > 2 {
		t.Errorf("seeds 1 and 2 agree on %d of %d offsets", same, a.Offsets())
	}
}

func TestExpected(t *testing.T) {
	s := Spec{Seed: 9, Groups: 12, TopicsPerGroup: 2, Topics: 4, Partitions: 3, Records: 100,
		GroupPrefix: "g", TopicPrefix: "t"}.WithDefaults()
	s.Each(func(k migrate.Key, off int64) bool {
		got, ok := s.Expected(k)
		if !ok || got != off {
			t.Errorf("Expected(%s) = %d, %v; Each gave %d", k, got, ok, off)
		}
		return true
	})
	// Group 3 has the window of pool topics 3 and 0 (wrapping); 1 and 2 are outside it.
	tests := []struct {
		name string
		key  migrate.Key
		ok   bool
	}{
		{"seeded", migrate.Key{Group: "g-03", Topic: "t-0", Partition: 2}, true},
		{"seeded wrap", migrate.Key{Group: "g-03", Topic: "t-3", Partition: 0}, true},
		{"topic outside window", migrate.Key{Group: "g-03", Topic: "t-1", Partition: 0}, false},
		{"unpadded group", migrate.Key{Group: "g-3", Topic: "t-3", Partition: 0}, false},
		{"group out of range", migrate.Key{Group: "g-12", Topic: "t-0", Partition: 0}, false},
		{"other prefix", migrate.Key{Group: "h-03", Topic: "t-0", Partition: 0}, false},
		{"unknown topic", migrate.Key{Group: "g-03", Topic: "t-4", Partition: 0}, false},
		{"partition out of range", migrate.Key{Group: "g-03", Topic: "t-0", Partition: 3}, false},
		{"negative partition", migrate.Key{Group: "g-03", Topic: "t-0", Partition: -1}, false},
		{"signed index", migrate.Key{Group: "g-+3", Topic: "t-0", Partition: 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := s.Expected(tt.key); ok != tt.ok {
				t.Errorf("Expected(%s) ok = %v, want %v", tt.key, ok, tt.ok)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	good := Spec{Groups: 2, TopicsPerGroup: 1, Topics: 1, Partitions: 1, Records: 1}
	tests := []struct {
		name  string
		edit  func(*Spec)
		error string // substring; "" means valid
	}{
		{"good", func(*Spec) {}, ""},
		{"no groups is fine", func(s *Spec) { s.Groups = 0; s.LiveGroups = 0 }, ""},
		{"chroot", func(s *Spec) { s.Chroot = "/kafka/x" }, ""},
		{"negative groups", func(s *Spec) { s.Groups = -1 }, "groups must be"},
		{"no topics", func(s *Spec) { s.Topics = 0 }, "topics must be"},
		{"too many topics per group", func(s *Spec) { s.TopicsPerGroup = 2 }, "topics per group"},
		{"no partitions", func(s *Spec) { s.Partitions = 0 }, "partitions must be"},
		{"negative records", func(s *Spec) { s.Records = -1 }, "records must be"},
		{"too many live", func(s *Spec) { s.LiveGroups = 3 }, "live groups"},
		{"slash in prefix", func(s *Spec) { s.GroupPrefix = "a/b" }, "group prefix"},
		{"space in topic prefix", func(s *Spec) { s.TopicPrefix = "a b" }, "topic prefix"},
		{"relative chroot", func(s *Spec) { s.Chroot = "kafka" }, "chroot"},
		{"trailing slash chroot", func(s *Spec) { s.Chroot = "/kafka/" }, "chroot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.edit(&s)
			err := s.WithDefaults().Validate()
			switch {
			case tt.error == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
				t.Errorf("error %v, want one containing %q", err, tt.error)
			}
		})
	}
}

func TestSplitServers(t *testing.T) {
	tests := []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{in: "127.0.0.1:2181", servers: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2/kafka", servers: []string{"a:1", "b:2"}, chroot: "/kafka"},
		{in: "a:1/", servers: []string{"a:1"}},
		{in: "a:1/x/y", servers: []string{"a:1"}, chroot: "/x/y"},
		{in: "a:1/x/", bad: true},
		{in: "", bad: true},
		{in: "/kafka", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			servers, chroot, err := splitServers(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("want an error, got %v %q", servers, chroot)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(servers, ",") != strings.Join(tt.servers, ",") || chroot != tt.chroot {
				t.Errorf("got %v %q, want %v %q", servers, chroot, tt.servers, tt.chroot)
			}
		})
	}
}
