package kafkaconn

import (
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

// apisOf builds an ApiVersions map from "key:min-max" triples.
func apisOf(ranges ...[3]int16) map[int16]apiRange {
	m := make(map[int16]apiRange, len(ranges))
	for _, r := range ranges {
		m[r[0]] = apiRange{min: r[1], max: r[2]}
	}
	return m
}

// Observed on the local stack: Kafka 3.9.1 (ZooKeeper mode) and Kafka 4.1.1 (KRaft), the
// APIs the rule looks at.
var (
	kafka391 = apisOf([3]int16{8, 0, 9}, [3]int16{9, 0, 9}, [3]int16{11, 0, 9}, [3]int16{18, 0, 4},
		[3]int16{60, 0, 1}, [3]int16{66, 0, 1})
	kafka411 = apisOf([3]int16{8, 2, 9}, [3]int16{9, 1, 9}, [3]int16{11, 0, 9}, [3]int16{18, 0, 4},
		[3]int16{60, 0, 2}, [3]int16{66, 0, 2})
)

func TestVersionFromAPIs(t *testing.T) {
	tests := []struct {
		name    string
		apis    map[int16]apiRange
		want    sarama.KafkaVersion
		wantErr string
	}{
		{"kafka 4.1 kraft", kafka411, sarama.V4_0_0_0, ""},
		{"kafka 3.9 zk", kafka391, sarama.V3_9_0_0, ""},
		{"kafka 3.8", apisOf([3]int16{8, 0, 9}, [3]int16{9, 0, 9}, [3]int16{11, 0, 9}, [3]int16{18, 0, 3}, [3]int16{60, 0, 1}, [3]int16{66, 0, 1}), sarama.V3_8_0_0, ""},
		{"kafka 3.7", apisOf([3]int16{8, 0, 9}, [3]int16{9, 0, 9}, [3]int16{11, 0, 9}, [3]int16{18, 0, 3}, [3]int16{60, 0, 1}, [3]int16{66, 0, 0}), sarama.V3_7_0_0, ""},
		{"kafka 3.3", apisOf([3]int16{8, 0, 8}, [3]int16{9, 0, 8}, [3]int16{11, 0, 9}, [3]int16{18, 0, 3}, [3]int16{60, 0, 0}), sarama.V3_2_0_0, ""},
		{"kafka 3.0", apisOf([3]int16{8, 0, 8}, [3]int16{9, 0, 8}, [3]int16{11, 0, 7}, [3]int16{18, 0, 3}), sarama.V3_0_0_0, ""},
		{"kafka 2.8", apisOf([3]int16{8, 0, 8}, [3]int16{9, 0, 7}, [3]int16{11, 0, 7}, [3]int16{18, 0, 3}), sarama.V2_4_0_0, ""},
		{"kafka 2.3", apisOf([3]int16{8, 0, 7}, [3]int16{9, 0, 5}, [3]int16{18, 0, 2}), sarama.V2_3_0_0, ""},
		{"kafka 2.1", apisOf([3]int16{8, 0, 6}, [3]int16{9, 0, 5}, [3]int16{18, 0, 2}), sarama.V2_1_0_0, ""},
		{"kafka 2.0 too old", apisOf([3]int16{8, 0, 4}, [3]int16{18, 0, 2}), sarama.KafkaVersion{}, "OffsetCommit up to v4: Kafka 2.1.0 or newer"},
		{"no offset commit", apisOf([3]int16{18, 0, 2}), sarama.KafkaVersion{}, "does not advertise OffsetCommit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := versionFromAPIs(tt.apis)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("versionFromAPIs = %v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("versionFromAPIs = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// Every version the rule can choose, and MinVersion, must make sarama send an OffsetCommit
// Kafka 4.x accepts (v2+, KIP-896) that carries the leader epoch (v6+; kafkawriter builds its
// commits with sarama.NewOffsetCommitRequest), and a ListOffsets 4.x accepts (v1+, offsetlog
// and kafkawriter build it with sarama.NewOffsetRequest).
func TestMilestonesRequestVersions(t *testing.T) {
	versions := []sarama.KafkaVersion{MinVersion}
	for _, m := range milestones {
		versions = append(versions, m.version)
	}
	for _, v := range versions {
		conf := sarama.NewConfig()
		conf.Version = v
		if got := sarama.NewOffsetCommitRequest(conf, "g").Version; got < 6 {
			t.Errorf("version %s: OffsetCommit v%d, want >= 6", v, got)
		}
		if got := sarama.NewOffsetRequest(v).Version; got < 1 {
			t.Errorf("version %s: ListOffsets v%d, want >= 1", v, got)
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    sarama.KafkaVersion
		wantErr string
	}{
		{"3.9.0", sarama.V3_9_0_0, ""},
		{"2.1.0", sarama.V2_1_0_0, ""},
		{"4.1.0", sarama.V4_1_0_0, ""},
		{"2.0.1", sarama.KafkaVersion{}, "at least 2.1.0"},
		{"0.10.2.0", sarama.KafkaVersion{}, "at least 2.1.0"},
		{"3.9", sarama.KafkaVersion{}, "expected"},
		{"auto", sarama.KafkaVersion{}, "expected"}, // only Config.Version treats "auto" specially
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseVersion(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseVersion(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseVersion(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
