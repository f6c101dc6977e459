package kafkawriter

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// mockCluster is one sarama.MockBroker (sarama's in-process TCP broker, not a generated mock)
// playing Kafka 4.1 for group "g": it answers ApiVersions, Metadata and FindCoordinator, and
// OffsetCommit with the given sequence of responses.
func mockCluster(t *testing.T, commits ...any) (*sarama.MockBroker, *Client) {
	t.Helper()
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	var keys []sarama.ApiVersionsResponseKey
	for k, r := range map[int16][2]int16{3: {0, 12}, 8: {2, 9}, 9: {1, 9}, 10: {0, 6}, 11: {0, 9}, 18: {0, 4}, 60: {0, 2}, 66: {0, 2}} {
		keys = append(keys, sarama.ApiVersionsResponseKey{ApiKey: k, MinVersion: r[0], MaxVersion: r[1]})
	}
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest":     sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).SetController(b.BrokerID()),
		"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, "g", b),
		"OffsetCommitRequest":    sarama.NewMockSequence(commits...),
	})
	c, err := Open(context.Background(), Config{Bootstrap: []string{b.Addr()}, Connections: 1, RetryTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return b, c
}

// committedIn lists the partitions of topic "t" in each OffsetCommit the broker received.
func committedIn(b *sarama.MockBroker) [][]int32 {
	var out [][]int32
	for _, rr := range b.History() {
		req, ok := rr.Request.(*sarama.OffsetCommitRequest)
		if !ok {
			continue
		}
		var parts []int32
		for p := range int32(10) {
			if _, _, err := req.Offset("t", p); err == nil {
				parts = append(parts, p)
			}
		}
		out = append(out, parts)
	}
	return out
}

func threeCommits() []migrate.Commit {
	return []migrate.Commit{
		{TopicPartition: tp("t", 0), Offset: 10},
		{TopicPartition: tp("t", 1), Offset: 11},
		{TopicPartition: tp("t", 2), Offset: 12},
	}
}

func TestCommitRetriesOnlyRetriablePartitions(t *testing.T) {
	b, c := mockCluster(t,
		sarama.NewMockOffsetCommitResponse(t).
			SetError("g", "t", 0, sarama.ErrNotCoordinatorForConsumer).
			SetError("g", "t", 1, sarama.ErrUnknownMemberId),
		sarama.NewMockOffsetCommitResponse(t), // the retry: all accepted
	)
	if c.Version() != sarama.V4_0_0_0 {
		t.Fatalf("negotiated %s against a 4.1-shaped broker", c.Version())
	}
	res, err := c.Commit(context.Background(), "g", threeCommits())
	if err != nil {
		t.Fatalf("group error: %v", err)
	}
	if res[0].Err != nil || res[2].Err != nil {
		t.Errorf("p0 (retried) %v, p2 %v: want both written", res[0].Err, res[2].Err)
	}
	if !IsGroupActive(res[1].Err) || !errors.Is(res[1].Err, sarama.ErrUnknownMemberId) {
		t.Errorf("p1: %v, want a group-active UNKNOWN_MEMBER_ID", res[1].Err)
	}
	sent := committedIn(b)
	if len(sent) != 2 || !slices.Equal(sent[0], []int32{0, 1, 2}) || !slices.Equal(sent[1], []int32{0}) {
		t.Fatalf("requests carried partitions %v, want [[0 1 2] [0]]: only the retriable one again", sent)
	}
}

func TestCommitGivesUpAfterRetryTimeout(t *testing.T) {
	_, c := mockCluster(t, sarama.NewMockOffsetCommitResponse(t).
		SetError("g", "t", 0, sarama.ErrOffsetsLoadInProgress).
		SetError("g", "t", 1, sarama.ErrOffsetsLoadInProgress))
	res, err := c.Commit(context.Background(), "g", threeCommits())
	if err == nil || !errors.Is(err, sarama.ErrOffsetsLoadInProgress) {
		t.Fatalf("group error %v, want the last retriable error after the retry budget", err)
	}
	for i, want := range []error{sarama.ErrOffsetsLoadInProgress, sarama.ErrOffsetsLoadInProgress, nil} {
		if want == nil && res[i].Err != nil || want != nil && !errors.Is(res[i].Err, want) {
			t.Errorf("p%d: %v, want %v", i, res[i].Err, want)
		}
	}
}
