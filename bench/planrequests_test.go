package bench_test

import (
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/internal/seed"
)

// The blind reader makes exactly the requests a plan makes: one listing of /consumers, three
// per group, one per topic, and one Get per offset, each Get after its topic's listing.
func TestPlanRequests(t *testing.T) {
	for _, tc := range []struct {
		groups, topics int
		partitions     int32
	}{{1, 1, 1}, {2, 3, 4}, {3, 2, 10}} {
		f := &fixture{chroot: "/c", spec: seed.Spec{Groups: tc.groups, TopicsPerGroup: tc.topics, Topics: tc.topics,
			Partitions: tc.partitions, GroupPrefix: "g", TopicPrefix: "t", Chroot: "/c"}}
		reqs := f.planRequests()
		offsets := f.offsetPaths()
		var lists, gets []string
		for _, r := range reqs {
			if r.list {
				lists = append(lists, r.path)
			} else {
				gets = append(gets, r.path)
			}
		}
		if want := 1 + 3*tc.groups + tc.groups*tc.topics; len(lists) != want {
			t.Errorf("%+v: %d listings, want %d: %v", tc, len(lists), want, lists)
		}
		if strings.Join(gets, " ") != strings.Join(offsets, " ") {
			t.Errorf("%+v: gets %v, want the offsets %v", tc, gets, offsets)
		}
		listed := map[string]bool{}
		for _, r := range reqs {
			if r.list {
				listed[r.path] = true
				continue
			}
			dir := r.path[:strings.LastIndex(r.path, "/")]
			if !listed[dir] || !listed[dir[:strings.LastIndex(dir, "/")]] {
				t.Errorf("%+v: get %s before the listing of its topic and group", tc, r.path)
			}
		}
		if reqs[0].path != "/c/consumers" || !reqs[0].list {
			t.Errorf("%+v: first request %+v, want the listing of /c/consumers", tc, reqs[0])
		}
	}
}
