package kafkawriter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func commitsOf(n int, topic, meta string) []migrate.Commit {
	out := make([]migrate.Commit, n)
	for i := range out {
		out[i] = migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: topic, Partition: int32(i)}, Offset: int64(i), Metadata: meta}
	}
	return out
}

func TestChunks(t *testing.T) {
	const g = "group"
	per := recordBytes(g, migrate.Commit{TopicPartition: migrate.TopicPartition{Topic: "t"}}) // bytes of one "t" commit
	tests := []struct {
		name     string
		commits  []migrate.Commit
		maxParts int
		maxBytes int
		want     []int // chunk sizes
	}{
		{"empty", nil, 10, 1 << 20, nil},
		{"one", commitsOf(1, "t", ""), 10, 1 << 20, []int{1}},
		{"exact parts", commitsOf(4000, "t", ""), 2000, 1 << 30, []int{2000, 2000}},
		{"parts remainder", commitsOf(5000, "t", ""), 2000, 1 << 30, []int{2000, 2000, 1000}},
		{"bytes bound", commitsOf(10, "t", ""), 100, 3 * per, []int{3, 3, 3, 1}},
		{"bytes exact fit", commitsOf(4, "t", ""), 100, 2 * per, []int{2, 2}},
		{"oversize commit alone", commitsOf(3, "t", strings.Repeat("m", 100)), 100, per, []int{1, 1, 1}},
		{"default budget with big metadata", commitsOf(5000, strings.Repeat("t", 100), strings.Repeat("m", 1000)), 5000, maxChunkBytes, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunks(g, tt.commits, tt.maxParts, tt.maxBytes)
			total := 0
			next := 0
			for ci, c := range got {
				if len(c) == 0 || len(c) > tt.maxParts {
					t.Fatalf("chunk %d has %d commits (max %d)", ci, len(c), tt.maxParts)
				}
				bytes := 0
				for _, cm := range c {
					if int(cm.Partition) != next {
						t.Fatalf("chunk %d: partition %d out of order, want %d", ci, cm.Partition, next)
					}
					next++
					bytes += recordBytes(g, cm)
				}
				if len(c) > 1 && bytes > tt.maxBytes {
					t.Fatalf("chunk %d: %d bytes over budget %d", ci, bytes, tt.maxBytes)
				}
				total += len(c)
			}
			if total != len(tt.commits) {
				t.Fatalf("chunks hold %d commits, want %d", total, len(tt.commits))
			}
			if tt.want != nil {
				sizes := make([]int, len(got))
				for i, c := range got {
					sizes[i] = len(c)
				}
				if fmt.Sprint(sizes) != fmt.Sprint(tt.want) {
					t.Fatalf("chunk sizes %v, want %v", sizes, tt.want)
				}
			}
		})
	}
}

// Appending to one chunk must never write into the next one's backing array.
func TestChunksDoNotAlias(t *testing.T) {
	cs := commitsOf(4, "t", "")
	got := chunks("g", cs, 2, 1<<20)
	grown := append(got[0], migrate.Commit{Offset: 99})
	if len(grown) != 3 || got[1][0].Offset != 2 || cs[2].Offset != 2 {
		t.Fatal("a chunk aliases its neighbour")
	}
}

func TestNewCommitRequest(t *testing.T) {
	tests := []struct {
		version     sarama.KafkaVersion
		wantVersion int16
	}{
		{sarama.V0_10_2_0, 2},
		{sarama.V0_11_0_0, 3},
		{sarama.V1_1_0_0, 3},
		{sarama.V2_0_0_0, 4},
		{sarama.V2_1_0_0, 6},
		{sarama.V2_3_0_0, 7},
		{sarama.V2_4_0_0, 8},
		{sarama.V3_9_0_0, 8},
		{sarama.V4_0_0_0, 8},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			conf := sarama.NewConfig()
			conf.Version = tt.version
			req := newCommitRequest(conf, "g", []migrate.Commit{{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 3}, Offset: 42, Metadata: "m"}})
			if req.Version != tt.wantVersion {
				t.Errorf("Version = %d, want %d", req.Version, tt.wantVersion)
			}
			if req.ConsumerGroupGeneration != sarama.GroupGenerationUndefined || req.ConsumerID != "" {
				t.Errorf("generation %d member %q, want an admin commit (-1, \"\")", req.ConsumerGroupGeneration, req.ConsumerID)
			}
			// -1 at every version: sarama may clamp a v5+ request down to an older
			// coordinator's v2-v4, and then encodes this field (0 would expire the offsets at
			// once). From v5 it is not encoded; sarama only notes it in its debug log.
			if req.RetentionTime != -1 {
				t.Errorf("RetentionTime = %d, want -1 (the broker's retention)", req.RetentionTime)
			}
			off, meta, err := req.Offset("t", 3)
			if err != nil || off != 42 || meta != "m" {
				t.Errorf("block = %d %q %v", off, meta, err)
			}
		})
	}
}

// The trap DESIGN.md names: for v2-v4 the retention field is encoded, and 0 would expire the
// offsets at once. sarama's constructor sets -1 (broker default); this pins that behaviour.
func TestSaramaRetentionDefault(t *testing.T) {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_0_0_0
	req := sarama.NewOffsetCommitRequest(conf, "g")
	if req.Version != 4 || req.RetentionTime != -1 {
		t.Fatalf("sarama OffsetCommit for 2.0: v%d retention %d, want v4 retention -1", req.Version, req.RetentionTime)
	}
}
