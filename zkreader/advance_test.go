package zkreader

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestAdvanceOffsetsLeavesADeletedGroup: the reverse mirror never brings back a group deleted
// from ZooKeeper (an operator's cleanup, or the end of a migration): every partition is left
// alone, and nothing is created.
func TestAdvanceOffsetsLeavesADeletedGroup(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	e.create(t, "/consumers/other", "", zk.WorldACL(zk.PermAll)) // /consumers exists, the group does not
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	left, err := r.AdvanceOffsets(ctx, "deleted", map[migrate.TopicPartition]int64{tp: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(left[tp], "deleted") {
		t.Errorf("left %v, want %s left alone as deleted", left, tp)
	}
	if ok, _, err := e.admin.conns[0].Exists(e.root + "/consumers/deleted"); err != nil || ok {
		t.Errorf("the deleted group exists again (%v, %v)", ok, err)
	}
}

// TestAdvanceOffsets: the rollback write moves a znode forward only, and never over data that
// is not an offset; a missing znode (and its topic folder) is created.
func TestAdvanceOffsets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := openT(t, Config{Servers: e.servers()})
	cases := []struct {
		name     string
		before   string // "" with missing: the znode does not exist
		missing  bool
		to       int64
		want     string // the znode's data after
		wantLeft string // substring of why it was left alone; "" when written
	}{
		{name: "missing: created", missing: true, to: 50, want: "50"},
		{name: "below: raised", before: "10", to: 50, want: "50"},
		{name: "equal: left alone", before: "50", to: 50, want: "50", wantLeft: "already at 50"},
		{name: "above: left alone", before: "90", to: 50, want: "90", wantLeft: "already at 90"},
		{name: "sentinel -1: left alone", before: "-1", to: 50, want: "-1", wantLeft: "sentinel"},
		{name: "not a number: left alone", before: "abc", to: 50, want: "abc", wantLeft: "not a decimal number"},
	}
	offsets := map[migrate.TopicPartition]int64{}
	for i, tc := range cases {
		tp := migrate.TopicPartition{Topic: "t" + string(rune('a'+i)), Partition: int32(i)}
		offsets[tp] = tc.to
		if !tc.missing {
			e.create(t, "/consumers/g/offsets/"+tp.Topic+"/"+itoa(tp.Partition), tc.before, zk.WorldACL(zk.PermAll))
		}
	}
	left, err := r.AdvanceOffsets(ctx, "g", offsets)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		tp := migrate.TopicPartition{Topic: "t" + string(rune('a'+i)), Partition: int32(i)}
		data, _, err := e.admin.conns[0].Get(e.root + "/consumers/g/offsets/" + tp.Topic + "/" + itoa(tp.Partition))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(data) != tc.want {
			t.Errorf("%s: znode holds %q, want %q", tc.name, data, tc.want)
		}
		why, wasLeft := left[tp]
		if (tc.wantLeft != "") != wasLeft || !strings.Contains(why, tc.wantLeft) {
			t.Errorf("%s: left alone %t with %q, want %q", tc.name, wasLeft, why, tc.wantLeft)
		}
	}
}

// TestAdvanceOffsetsConcurrent: many writers advancing one znode at once end at the highest
// value: each write is conditional on the version it read, so no slower, lower write lands
// over a higher one (a plain set after a read would let it).
func TestAdvanceOffsetsConcurrent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	readers := []*Reader{openT(t, Config{Servers: e.servers()}), openT(t, Config{Servers: e.servers()})}
	tp := migrate.TopicPartition{Topic: "t", Partition: 0}
	e.create(t, "/consumers/g", "", zk.WorldACL(zk.PermAll)) // the reverse mirror writes into existing groups only
	const writers = 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		// Values interleaved so that low and high writes race: 39, 0, 38, 1, ...
		v := int64(i / 2)
		if i%2 == 0 {
			v = writers - 1 - v
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := readers[i%2].AdvanceOffsets(ctx, "g", map[migrate.TopicPartition]int64{tp: v}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, _, err := e.admin.conns[0].Get(e.root + "/consumers/g/offsets/t/0")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "39" {
		t.Errorf("after %d concurrent advances the znode holds %q, want the highest, 39", writers, data)
	}
}
