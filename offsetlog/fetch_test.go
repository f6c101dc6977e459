package offsetlog

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// mockOffsets is a sarama.MockBroker (sarama's in-process TCP broker, not a generated mock)
// playing a Kafka 4.1 broker with a 2-partition __consumer_offsets: partition 0 spans offsets
// [0, 4), partition 1 is empty. Fetch answers come from fetches, in order (the last repeats).
func mockOffsets(t *testing.T, fetches ...any) (*sarama.MockBroker, *Reader) {
	return mockOffsetsEnds(t, [2]int64{4, 0}, fetches...)
}

// mockOffsetsEnds is mockOffsets with the given high watermarks of partitions 0 and 1.
func mockOffsetsEnds(t *testing.T, ends [2]int64, fetches ...any) (*sarama.MockBroker, *Reader) {
	t.Helper()
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": apiVersions41(t),
		"MetadataRequest": sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), b.BrokerID()).
			SetLeader(Topic, 0, b.BrokerID()).SetLeader(Topic, 1, b.BrokerID()),
		"OffsetRequest": sarama.NewMockOffsetResponse(t).
			SetOffset(Topic, 0, sarama.OffsetOldest, 0).SetOffset(Topic, 0, sarama.OffsetNewest, ends[0]).
			SetOffset(Topic, 1, sarama.OffsetOldest, 0).SetOffset(Topic, 1, sarama.OffsetNewest, ends[1]),
		"FetchRequest": sarama.NewMockSequence(fetches...),
	})
	r, err := Open(context.Background(), Config{Bootstrap: []string{b.Addr()}, RetryTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return b, r
}

// apiVersions41 answers ApiVersions with Kafka 4.1's ranges of the APIs the reader uses.
func apiVersions41(t *testing.T) *sarama.MockApiVersionsResponse {
	var keys []sarama.ApiVersionsResponseKey
	for k, r := range map[int16][2]int16{1: {4, 17}, 2: {1, 10}, 3: {0, 12}, 18: {0, 4}} {
		keys = append(keys, sarama.ApiVersionsResponseKey{ApiKey: k, MinVersion: r[0], MaxVersion: r[1]})
	}
	return sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys)
}

func fetchResp() *sarama.FetchResponse { return &sarama.FetchResponse{Version: 11} }

// "b" is on partition 0 of 2 (hash 98).
func commitValue(offset int64) sarama.ByteEncoder {
	return valueBytes(OffsetValue{Version: 4, Offset: offset, LeaderEpoch: -1, Metadata: "m", CommitTimestamp: 1})
}

func TestReadRetriesAndStopsAtSnapshotEnd(t *testing.T) {
	notLeader := fetchResp()
	notLeader.AddError(Topic, 0, sarama.ErrNotLeaderForPartition)
	first := fetchResp()
	first.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 0)), commitValue(5), 0, 7, true)
	first.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 1)), commitValue(6), 1, -1, false)
	// A throttled fetch may come back empty although records exist: not the end of the log.
	throttled := fetchResp()
	throttled.ThrottleTime = time.Millisecond
	throttled.AddError(Topic, 0, sarama.ErrNoError)
	second := fetchResp()
	second.AddControlRecord(Topic, 0, 2, 7, sarama.ControlRecordCommit)
	second.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 1)), nil, 3, -1, false)
	second.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 2)), commitValue(9), 4, -1, false) // past the end

	b, r := mockOffsets(t, notLeader, first, throttled, second)
	got, stats, err := r.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := got["b"][migrate.TopicPartition{Topic: "t", Partition: 0}]
	if len(got) != 1 || len(got["b"]) != 1 || !ok || c.Offset != 5 || !c.Transactional || c.LogOffset != 0 {
		t.Errorf("offsets %+v, want only b t/0 = 5 (committed transaction; t/1 deleted; t/2 past the snapshot)", got)
	}
	if stats.TransactionalCommits != 1 || stats.Tombstones != 1 || stats.ValueVersions[4] != 2 || stats.Partitions != 2 {
		t.Errorf("stats %+v", stats)
	}
	fetches := 0
	for _, rr := range b.History() {
		if req, ok := rr.Request.(*sarama.FetchRequest); ok {
			fetches++
			if req.Version != 11 || req.Isolation != sarama.ReadUncommitted {
				t.Errorf("fetch v%d isolation %d, want v11 read_uncommitted", req.Version, req.Isolation)
			}
		}
	}
	if fetches != 4 {
		t.Errorf("%d fetches, want 4 (not leader, records, throttled, records); empty partition 1 never fetched", fetches)
	}
}

// TestReadCrowdedOutPartition: a broker fills a response up to its size limit and leaves the
// other partitions empty. An empty partition in a shared fetch is fetched again alone, not
// taken as the end of its log (a real 3.9 broker with 50 busy partitions did exactly this).
func TestReadCrowdedOutPartition(t *testing.T) {
	shared := fetchResp()
	shared.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 0)), commitValue(5), 0, -1, false)
	shared.AddError(Topic, 1, sarama.ErrNoError) // "a" (partition 1): no room left
	alone := fetchResp()
	alone.AddRecordBatch(Topic, 1, sarama.ByteEncoder(keyBytes(1, "a", "t", 0)), commitValue(6), 0, -1, false)
	b, r := mockOffsetsEnds(t, [2]int64{1, 1}, shared, alone)
	got, _, err := r.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"][migrate.TopicPartition{Topic: "t"}].Offset != 6 || got["b"][migrate.TopicPartition{Topic: "t"}].Offset != 5 {
		t.Errorf("offsets %+v, want a t/0 = 6 and b t/0 = 5", got)
	}
	fetches := 0
	for _, rr := range b.History() {
		if _, ok := rr.Request.(*sarama.FetchRequest); ok {
			fetches++
		}
	}
	if fetches != 2 {
		t.Errorf("%d fetches, want 2 (both partitions, then partition 1 alone)", fetches)
	}
}

func TestReadFailsWhenRecordsVanish(t *testing.T) {
	gone := fetchResp()
	gone.AddError(Topic, 0, sarama.ErrOffsetOutOfRange)
	_, r := mockOffsets(t, gone)
	_, _, err := r.Read(context.Background(), nil)
	if !errors.Is(err, sarama.ErrOffsetOutOfRange) {
		t.Fatalf("Read: %v, want OFFSET_OUT_OF_RANGE at once (a partial replay is not a snapshot)", err)
	}
}

func TestReadFailsOnCorruptRecord(t *testing.T) {
	bad := fetchResp()
	bad.AddRecordBatch(Topic, 0, sarama.ByteEncoder(keyBytes(1, "b", "t", 0)), sarama.ByteEncoder{0, 9}, 0, -1, false)
	_, r := mockOffsets(t, bad)
	_, _, err := r.Read(context.Background(), nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read: %v, want ErrCorrupt", err)
	}
}

func TestReadHonorsContext(t *testing.T) {
	notLeader := fetchResp()
	notLeader.AddError(Topic, 0, sarama.ErrNotLeaderForPartition)
	_, r := mockOffsets(t, notLeader)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := r.Read(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a cancelled context: %v", err)
	}
}

func TestReplayBlock(t *testing.T) {
	r := &Reader{log: slog.New(slog.DiscardHandler)}
	newP := func() *progress {
		return &progress{part: 0, bounded: true, next: 3, end: 10, maxBytes: fetchPartitionBytes, st: newPartState(0, 1, nil)}
	}
	p := newP()
	if err := r.replay(&sarama.FetchResponseBlock{Partial: true}, p, false, true); err != nil || p.maxBytes != 2*fetchPartitionBytes || p.next != 3 {
		t.Errorf("oversized batch: %v, max bytes %d next %d; want the fetch size doubled", err, p.maxBytes, p.next)
	}
	p.maxBytes = maxPartitionBytes
	if err := r.replay(&sarama.FetchResponseBlock{Partial: true}, p, false, true); err == nil {
		t.Error("batch above the largest fetch size: want an error")
	}
	p = newP()
	if err := r.replay(&sarama.FetchResponseBlock{}, p, true, true); !errors.Is(err, kafkaconn.ErrThrottled) || p.done() {
		t.Errorf("throttled empty fetch: %v, done %v; want a retriable error", err, p.done())
	}
	if err := r.replay(&sarama.FetchResponseBlock{}, p, false, false); err != nil || p.done() || !p.solo {
		t.Errorf("empty in a fetch of several partitions: %v, done %v solo %v; want it fetched alone next", err, p.done(), p.solo)
	}
	if err := r.replay(&sarama.FetchResponseBlock{}, p, false, true); err != nil || !p.done() {
		t.Errorf("empty fetch of it alone: %v, done %v; want done (nothing left below the high watermark)", err, p.done())
	}
	old := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{{RecordBatch: &sarama.RecordBatch{Version: 2, FirstOffset: 0, LastOffsetDelta: 2}}}}
	if err := r.replay(old, newP(), false, true); err == nil || kafkaconn.Retriable(err) {
		t.Errorf("only a batch before the position: %v, want a permanent error, not a loop", err)
	}
	if err := r.replay(nil, newP(), false, true); !kafkaconn.Retriable(err) {
		t.Errorf("missing block: %v, want retriable", err)
	}
}
