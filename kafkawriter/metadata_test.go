package kafkawriter

import (
	"slices"
	"testing"

	"github.com/IBM/sarama"
)

// Before Metadata v4 (Kafka 0.11) a request naming a missing topic creates it on a broker with
// auto.create.topics.enable: there the request must name no topic (all of them) and the answer
// be cut to the wanted ones, a missing one reported as unknown.
func TestMetadataRequest(t *testing.T) {
	tests := []struct {
		version   sarama.KafkaVersion
		wantAll   bool
		wantVer   int16
		wantNamed []string
	}{
		{sarama.V0_10_2_0, true, 2, nil},
		{sarama.V0_11_0_0, false, 4, []string{"a", "b"}},
		{sarama.V1_1_0_0, false, 5, []string{"a", "b"}},
		{sarama.V3_9_0_0, false, 11, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			req, all := metadataRequest(tt.version, []string{"a", "b"})
			if all != tt.wantAll || req.Version != tt.wantVer || !slices.Equal(req.Topics, tt.wantNamed) {
				t.Fatalf("metadataRequest = v%d topics %q all=%v; want v%d topics %q all=%v",
					req.Version, req.Topics, all, tt.wantVer, tt.wantNamed, tt.wantAll)
			}
			if !all && req.AllowAutoTopicCreation {
				t.Fatal("a request naming topics allows their creation")
			}
		})
	}
}

func TestOnlyTopics(t *testing.T) {
	got := onlyTopics([]*sarama.TopicMetadata{{Name: "other"}, {Name: "a"}}, []string{"a", "gone"})
	if len(got) != 2 || got[0].Name != "a" || got[0].Err != sarama.ErrNoError ||
		got[1].Name != "gone" || got[1].Err != sarama.ErrUnknownTopicOrPartition {
		t.Fatalf("onlyTopics = %+v, %+v; want a as answered, gone as UNKNOWN_TOPIC_OR_PARTITION, other left out", got[0], got[len(got)-1])
	}
}

// The DescribeGroups and DescribeConfigs versions built for each release line must be within
// what that release's brokers take (their ApiVersions; 0.10.2.2 and 1.1.1 observed on the
// stack, the others from the release's kafka-clients): nothing relies on being cut down.
func TestAdminVersionsPerRelease(t *testing.T) {
	tests := []struct {
		version                  sarama.KafkaVersion
		describeGroups, describe int16 // the broker's maximum; describe -1: no DescribeConfigs
	}{
		{sarama.V0_10_2_0, 0, -1},
		{sarama.V0_11_0_0, 1, 0},
		{sarama.V1_0_0_0, 1, 0},
		{sarama.V1_1_0_0, 1, 1},
		{sarama.V2_0_0_0, 2, 2},
		{sarama.V2_1_0_0, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.version.String(), func(t *testing.T) {
			if got := describeGroupsVersion(tt.version); got > tt.describeGroups {
				t.Errorf("DescribeGroups v%d, the broker takes up to v%d", got, tt.describeGroups)
			}
			if tt.describe >= 0 {
				if got := describeConfigsVersion(tt.version); got > tt.describe {
					t.Errorf("DescribeConfigs v%d, the broker takes up to v%d", got, tt.describe)
				}
			}
		})
	}
}
