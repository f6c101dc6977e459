package kafkawriter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestCommitFetchRoundTrip(t *testing.T) {
	c, s := openStack(t)
	topic := newTopic(t, c, 3)
	group := stacktest.Name(t, "g")
	mtime := time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := migrate.Provenance{Version: "v0.0.0-test", Mtime: mtime}.String()
	commits := []migrate.Commit{
		{TopicPartition: tp(topic, 0), Offset: 5, Metadata: meta},
		{TopicPartition: tp(topic, 2), Offset: 0, Metadata: meta},
		{TopicPartition: tp(topic, 1), Offset: 7, Metadata: ""},
	}
	mustCommit(t, c, group, commits)

	got, err := c.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(commits) {
		t.Fatalf("fetched %d offsets, want %d: %v", len(got), len(commits), got)
	}
	for _, cm := range commits {
		co := got[cm.TopicPartition]
		if co.Offset != cm.Offset || co.Metadata != cm.Metadata || co.LeaderEpoch != -1 {
			t.Errorf("%s: fetched %+v, want offset %d metadata %q leader epoch -1", cm.TopicPartition, co, cm.Offset, cm.Metadata)
		}
	}

	states, err := c.Groups(testCtx(t, time.Minute), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	st := states[group]
	if st.State != "Empty" || st.Members != 0 || st.Active() {
		t.Errorf("group state %+v, want Empty with no members", st)
	}
	for _, cm := range commits {
		if st.Committed[cm.TopicPartition] != cm.Offset {
			t.Errorf("Groups: %s = %d, want %d", cm.TopicPartition, st.Committed[cm.TopicPartition], cm.Offset)
		}
	}

	// Kafka's own consumer-groups tool is the independent check of what landed.
	byTool := s.DescribeOffsets(t, group)
	for _, cm := range commits {
		key := fmt.Sprintf("%s/%d", cm.Topic, cm.Partition)
		if off, ok := byTool[key]; !ok || off != cm.Offset {
			t.Errorf("consumer-groups tool: %s = %d (present %v), want %d", key, off, ok, cm.Offset)
		}
	}

	// A re-commit of the same offsets is a success (idempotent), and moves nothing.
	mustCommit(t, c, group, commits)
}

func TestGroupsAbsent(t *testing.T) {
	c, _ := openStack(t)
	group := stacktest.Name(t, "never")
	states, err := c.Groups(testCtx(t, time.Minute), []string{group})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := states[group]
	if !ok || st.State != "" || st.Members != 0 || len(st.Committed) != 0 || st.Active() {
		t.Fatalf("absent group: %+v (present %v), want the zero state", st, ok)
	}
}

// fixtureTopic is a 5,000-partition topic shared by runs (creating that many partitions costs
// seconds); tests only commit offsets for it under their own groups and never delete it.
const fixtureTopic = "kafkawriter-fixture-p5000"

func TestCommitManyPartitionsInChunks(t *testing.T) {
	c, _ := openStack(t)
	if err := c.CreateTopic(testCtx(t, 5*time.Minute), fixtureTopic, 5000); err != nil {
		t.Fatal(err)
	}
	group := stacktest.Name(t, "g")
	// 1,000 characters of metadata each: 5,000 of them are ~5 MiB, five times what one
	// OffsetCommit may append, so both the count and the byte bound must split them.
	meta := strings.Repeat("m", 1000)
	commits := commitsOf(5000, fixtureTopic, meta)
	for i := range commits {
		commits[i].Offset = int64(i % 7)
	}
	if n := len(chunks(group, commits, c.cfg.ChunkSize, maxChunkBytes)); n < 10 {
		t.Fatalf("only %d chunks: the byte bound does not split", n)
	}
	mustCommit(t, c, group, commits)

	got, err := c.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5000 {
		t.Fatalf("fetched %d offsets, want 5000", len(got))
	}
	for _, cm := range commits {
		if co := got[cm.TopicPartition]; co.Offset != cm.Offset || co.Metadata != meta {
			t.Fatalf("%s: fetched offset %d (metadata %d chars), want %d", cm.TopicPartition, co.Offset, len(co.Metadata), cm.Offset)
		}
	}
}

// The trap chunking exists for: one request whose records exceed message.max.bytes fails every
// partition, and writes nothing. Kafka 3.9 answers INVALID_COMMIT_OFFSET_SIZE; Kafka 4.x (the
// new group coordinator) answers UNKNOWN_SERVER_ERROR and logs "message larger than the max
// message size". Sent raw here, as a naive writer would.
func TestOneHugeCommitRequestFails(t *testing.T) {
	c, s := openStack(t)
	if err := c.CreateTopic(testCtx(t, 5*time.Minute), fixtureTopic, 5000); err != nil {
		t.Fatal(err)
	}
	group := stacktest.Name(t, "g")
	b, err := c.coordinator(testCtx(t, time.Minute), group, false)
	if err != nil {
		t.Fatal(err)
	}
	req := newCommitRequest(c.sc.Config(), group, commitsOf(5000, fixtureTopic, strings.Repeat("m", 1000)))
	resp, err := b.CommitOffset(req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sarama.KError{"zk": sarama.ErrInvalidCommitOffsetSize, "mm2": sarama.ErrInvalidCommitOffsetSize, "kraft": sarama.ErrUnknown}[s.Profile]
	codes := map[sarama.KError]int{}
	for p := range int32(5000) {
		codes[resp.Errors[fixtureTopic][p]]++
	}
	if codes[want] != 5000 {
		t.Errorf("profile %s: partition errors %v, want all 5000 %q", s.Profile, codes, want)
	}
	got, err := c.FetchCommitted(testCtx(t, time.Minute), group)
	if err != nil || len(got) != 0 {
		t.Fatalf("after the failed request: %d offsets committed (%v), want none", len(got), err)
	}
}

func TestCommitUnknownTopic(t *testing.T) {
	c, _ := openStack(t)
	topic := newTopic(t, c, 1)
	group := stacktest.Name(t, "g")
	missing := stacktest.Name(t, "missing")
	commits := []migrate.Commit{
		{TopicPartition: tp(topic, 0), Offset: 1},
		{TopicPartition: tp(missing, 0), Offset: 1},
		{TopicPartition: tp(topic, 9), Offset: 1}, // a partition the topic does not have
	}
	res, err := c.Commit(testCtx(t, time.Minute), group, commits)
	if err != nil {
		t.Fatalf("group error %v, want per-partition errors only", err)
	}
	if res[0].Err != nil {
		t.Errorf("existing partition: %v", res[0].Err)
	}
	for _, r := range res[1:] {
		if !errors.Is(r.Err, sarama.ErrUnknownTopicOrPartition) || !errors.Is(r.Err, migrate.ErrPartitionMissing) || IsGroupActive(r.Err) {
			t.Errorf("%s: %v, want UNKNOWN_TOPIC_OR_PARTITION", r.TopicPartition, r.Err)
		}
		if !strings.Contains(r.Err.Error(), r.TopicPartition.String()) {
			t.Errorf("error %q does not name %s", r.Err, r.TopicPartition)
		}
	}
}

func TestCommitCancelled(t *testing.T) {
	c, _ := openStack(t)
	ctx := testCtx(t, time.Minute)
	ctx, cancel := contextWithCancel(ctx)
	cancel()
	commits := []migrate.Commit{{TopicPartition: tp("t", 0), Offset: 1}, {TopicPartition: tp("t", 1), Offset: 1}}
	res, err := c.Commit(ctx, stacktest.Name(t, "g"), commits)
	if err == nil || len(res) != 2 {
		t.Fatalf("cancelled commit: %v, %v", res, err)
	}
	for _, r := range res {
		if r.Err == nil {
			t.Errorf("%s reported written after cancel", r.TopicPartition)
		}
	}
}
