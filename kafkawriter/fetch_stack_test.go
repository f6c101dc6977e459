package kafkawriter

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestFetchCommittedMany commits distinct offsets into more groups than one multi-group
// OffsetFetch carries, leaves two groups without commits, and checks that the batched path
// answers every group on the real broker (nothing left to the one-group fallback), and that it,
// FetchCommittedMany, and a client pinned to a pre-3.0 protocol (one request per group) all
// return exactly what was committed.
func TestFetchCommittedMany(t *testing.T) {
	c, s := openStack(t)
	if !c.multiGroupFetch() {
		t.Fatalf("profile %s: negotiated %s, which should have OffsetFetch v8", s.Profile, c.Version())
	}
	topic := newTopic(t, c, 3)
	const committedGroups = fetchGroupsChunk + 30
	want := map[string]map[migrate.TopicPartition]Committed{}
	var batch []GroupCommits
	for i := range committedGroups {
		g := stacktest.Name(t, fmt.Sprintf("g%03d", i))
		gc := GroupCommits{Group: g}
		want[g] = map[migrate.TopicPartition]Committed{}
		for p := range int32(3) {
			if (i+int(p))%3 == 0 {
				continue // every group leaves one partition without a commit
			}
			off := int64(i*10 + int(p))
			meta := fmt.Sprintf("m%d", i)
			gc.Commits = append(gc.Commits, migrate.Commit{TopicPartition: tp(topic, p), Offset: off, Metadata: meta})
			want[g][tp(topic, p)] = Committed{Offset: off, LeaderEpoch: -1, Metadata: meta}
		}
		batch = append(batch, gc)
	}
	for _, r := range c.CommitMany(testCtx(t, 2*time.Minute), batch) {
		if r.Err != nil {
			t.Fatalf("commit %s: %v", r.Group, r.Err)
		}
		for _, pr := range r.Results {
			if pr.Err != nil {
				t.Fatalf("commit %s %s: %v", r.Group, pr.TopicPartition, pr.Err)
			}
		}
	}
	for i := range 2 {
		want[stacktest.Name(t, fmt.Sprintf("none%d", i))] = map[migrate.TopicPartition]Committed{}
	}
	var names []string
	for g := range want {
		names = append(names, g)
	}

	check := func(how string, got map[string]map[migrate.TopicPartition]Committed) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d groups, want %d", how, len(got), len(want))
		}
		for g, w := range want {
			if fmt.Sprint(got[g]) != fmt.Sprint(w) {
				t.Errorf("%s: group %s = %v, want %v", how, g, got[g], w)
			}
		}
	}

	out := map[string]map[migrate.TopicPartition]Committed{}
	left, err := c.fetchBatched(testCtx(t, time.Minute), uniqueSorted(names), out, &sync.Mutex{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("multi-group fetch left %d groups to the fallback: %v", len(left), left)
	}
	check("multi-group requests", out)

	got, err := c.FetchCommittedMany(testCtx(t, time.Minute), names)
	if err != nil {
		t.Fatal(err)
	}
	check("FetchCommittedMany", got)

	old, err := Open(testCtx(t, time.Minute), Config{Bootstrap: []string{s.Kafka}, Version: "2.8.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := old.Close(); err != nil {
			t.Error(err)
		}
	}()
	if old.multiGroupFetch() {
		t.Fatal("a 2.8.0 client must fetch one group per request")
	}
	got, err = old.FetchCommittedMany(testCtx(t, time.Minute), names)
	if err != nil {
		t.Fatal(err)
	}
	check("one group per request (2.8.0)", got)
}
