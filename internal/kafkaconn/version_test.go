package kafkaconn

import (
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

// apisOf builds an ApiVersions map from "key:min-max" triples.
// apiKeys is apis as a mock broker's ApiVersions answer carries them.
func apiKeys(apis map[int16]apiRange) []sarama.ApiVersionsResponseKey {
	var out []sarama.ApiVersionsResponseKey
	for k, r := range apis {
		out = append(out, sarama.ApiVersionsResponseKey{ApiKey: k, MinVersion: r.min, MaxVersion: r.max})
	}
	return out
}

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
	// Kafka 0.10.2.2 (the kafka0102 stack), its whole ApiVersions answer.
	kafka0102 = apisOf([3]int16{0, 0, 2}, [3]int16{1, 0, 3}, [3]int16{2, 0, 1}, [3]int16{3, 0, 2}, [3]int16{4, 0, 0},
		[3]int16{5, 0, 0}, [3]int16{6, 0, 3}, [3]int16{7, 1, 1}, [3]int16{8, 0, 2}, [3]int16{9, 0, 2}, [3]int16{10, 0, 0},
		[3]int16{11, 0, 1}, [3]int16{12, 0, 0}, [3]int16{13, 0, 0}, [3]int16{14, 0, 0}, [3]int16{15, 0, 0}, [3]int16{16, 0, 0},
		[3]int16{17, 0, 0}, [3]int16{18, 0, 0}, [3]int16{19, 0, 1}, [3]int16{20, 0, 0})
	// Kafka 0.11.0.3, 1.0.2 and 2.0.1, not run here: the ranges of those releases' kafka-clients
	// ApiKeys (oldestVersion-latestVersion), which their brokers share.
	kafka011 = apisOf([3]int16{0, 0, 3}, [3]int16{1, 0, 5}, [3]int16{2, 0, 2}, [3]int16{3, 0, 4}, [3]int16{4, 0, 0}, [3]int16{5, 0, 0}, [3]int16{6, 0, 3},
		[3]int16{7, 1, 1}, [3]int16{8, 0, 3}, [3]int16{9, 0, 3}, [3]int16{10, 0, 1}, [3]int16{11, 0, 2}, [3]int16{12, 0, 1}, [3]int16{13, 0, 1},
		[3]int16{14, 0, 1}, [3]int16{15, 0, 1}, [3]int16{16, 0, 1}, [3]int16{17, 0, 0}, [3]int16{18, 0, 1}, [3]int16{19, 0, 2}, [3]int16{20, 0, 1},
		[3]int16{32, 0, 0})
	kafka10 = apisOf([3]int16{0, 0, 5}, [3]int16{1, 0, 6}, [3]int16{2, 0, 2}, [3]int16{3, 0, 5}, [3]int16{4, 0, 1}, [3]int16{5, 0, 0}, [3]int16{6, 0, 4},
		[3]int16{7, 0, 1}, [3]int16{8, 0, 3}, [3]int16{9, 0, 3}, [3]int16{10, 0, 1}, [3]int16{11, 0, 2}, [3]int16{12, 0, 1}, [3]int16{13, 0, 1},
		[3]int16{14, 0, 1}, [3]int16{15, 0, 1}, [3]int16{16, 0, 1}, [3]int16{17, 0, 1}, [3]int16{18, 0, 1}, [3]int16{19, 0, 2}, [3]int16{20, 0, 1},
		[3]int16{32, 0, 0})
	kafka20 = apisOf([3]int16{0, 0, 6}, [3]int16{1, 0, 8}, [3]int16{2, 0, 3}, [3]int16{3, 0, 6}, [3]int16{4, 0, 1}, [3]int16{5, 0, 0}, [3]int16{6, 0, 4},
		[3]int16{7, 0, 1}, [3]int16{8, 0, 4}, [3]int16{9, 0, 4}, [3]int16{10, 0, 2}, [3]int16{11, 0, 3}, [3]int16{12, 0, 2}, [3]int16{13, 0, 2},
		[3]int16{14, 0, 2}, [3]int16{15, 0, 2}, [3]int16{16, 0, 2}, [3]int16{17, 0, 1}, [3]int16{18, 0, 2}, [3]int16{19, 0, 3}, [3]int16{20, 0, 2},
		[3]int16{32, 0, 2}, [3]int16{42, 0, 1})
	// Kafka 1.1.1 (the kafka11 stack), the APIs up to DeleteGroups.
	kafka111 = apisOf([3]int16{0, 0, 5}, [3]int16{1, 0, 7}, [3]int16{2, 0, 2}, [3]int16{3, 0, 5}, [3]int16{4, 0, 1},
		[3]int16{5, 0, 0}, [3]int16{6, 0, 4}, [3]int16{7, 0, 1}, [3]int16{8, 0, 3}, [3]int16{9, 0, 3}, [3]int16{10, 0, 1},
		[3]int16{11, 0, 2}, [3]int16{12, 0, 1}, [3]int16{13, 0, 1}, [3]int16{14, 0, 1}, [3]int16{15, 0, 1}, [3]int16{16, 0, 1},
		[3]int16{17, 0, 1}, [3]int16{18, 0, 1}, [3]int16{19, 0, 2}, [3]int16{20, 0, 1}, [3]int16{32, 0, 1}, [3]int16{42, 0, 0})
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
		{"kafka 2.0", kafka20, sarama.V2_0_0_0, ""},
		{"kafka 1.1 observed", kafka111, sarama.V1_1_0_0, ""},
		{"kafka 1.0", kafka10, sarama.V1_0_0_0, ""},
		{"kafka 0.11", kafka011, sarama.V0_11_0_0, ""},
		{"kafka 0.10.2 observed", kafka0102, sarama.V0_10_2_0, ""},
		{"kafka 0.10.1 refused", apisOf([3]int16{1, 0, 3}, [3]int16{2, 0, 1}, [3]int16{3, 0, 2}, [3]int16{8, 0, 2}, [3]int16{9, 0, 1}, [3]int16{18, 0, 0}),
			sarama.KafkaVersion{}, "broker is Kafka 0.10.1 (OffsetCommit up to v2, OffsetFetch up to v1): Kafka 0.10.2.0 or newer is required"},
		{"kafka 0.10.0 refused", apisOf([3]int16{1, 0, 2}, [3]int16{2, 0, 0}, [3]int16{3, 0, 1}, [3]int16{8, 0, 2}, [3]int16{9, 0, 1}, [3]int16{18, 0, 0}),
			sarama.KafkaVersion{}, "broker is Kafka 0.10.0 (OffsetCommit up to v2, OffsetFetch up to v1)"},
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

// Every version the rule can choose, and MinVersion, must make sarama build requests every
// broker it can be chosen for accepts without a clamp: OffsetCommit v2+ (Kafka 4.x refuses v0/v1,
// KIP-896; v1 would carry a commit timestamp, v0 write to ZooKeeper), OffsetFetch v2+ (all of a
// group's partitions, KIP-88), ListOffsets v1+ (one offset per partition; 4.x refuses v0), and,
// on each release from 0.10.2 to 2.0, nothing above its own maximum.
func TestMilestonesRequestVersions(t *testing.T) {
	versions := []sarama.KafkaVersion{MinVersion}
	for _, m := range milestones {
		versions = append(versions, m.version)
	}
	for _, v := range versions {
		conf := sarama.NewConfig()
		conf.Version = v
		if got := sarama.NewOffsetCommitRequest(conf, "g").Version; got < 2 {
			t.Errorf("version %s: OffsetCommit v%d, want >= 2", v, got)
		}
		if got := sarama.NewOffsetFetchRequest(v, "g", nil).Version; got < 2 {
			t.Errorf("version %s: OffsetFetch v%d, want >= 2", v, got)
		}
		if got := sarama.NewOffsetRequest(v).Version; got < 1 {
			t.Errorf("version %s: ListOffsets v%d, want >= 1", v, got)
		}
	}
	for _, b := range []struct {
		release string
		apis    map[int16]apiRange
	}{{"0.10.2.2", kafka0102}, {"0.11.0.3", kafka011}, {"1.0.2", kafka10}, {"1.1.1", kafka111}, {"2.0.1", kafka20}} {
		v, err := versionFromAPIs(b.apis)
		if err != nil {
			t.Fatal(err)
		}
		conf := sarama.NewConfig()
		conf.Version = v
		for _, r := range []struct {
			name string
			api  int16
			got  int16
		}{
			{"OffsetCommit", apiOffsetCommit, sarama.NewOffsetCommitRequest(conf, "g").Version},
			{"OffsetFetch", apiOffsetFetch, sarama.NewOffsetFetchRequest(v, "g", nil).Version},
			{"ListOffsets", apiListOffsets, sarama.NewOffsetRequest(v).Version},
			{"Metadata", apiMetadata, sarama.NewMetadataRequest(v, nil).Version},
		} {
			if max := b.apis[r.api].max; r.got > max {
				t.Errorf("%s: sarama builds v%d at %s, Kafka %s takes up to v%d", r.name, r.got, v, b.release, max)
			}
		}
	}
}

func TestCheckExplicit(t *testing.T) {
	tests := []struct {
		name               string
		explicit, detected sarama.KafkaVersion
		wantErr            string
	}{
		{"same release line", sarama.V1_1_1_0, sarama.V1_1_0_0, ""},
		{"older than the broker", sarama.V0_10_2_0, sarama.V1_1_0_0, ""},
		{"newer line than an old broker", sarama.V2_1_0_0, sarama.V1_1_0_0, "the broker is Kafka 1.1.0"},
		{"next line up", sarama.V1_1_0_0, sarama.V1_0_0_0, "the broker is Kafka 1.0.0"},
		{"0.11 against 0.10.2", sarama.V0_11_0_0, sarama.V0_10_2_0, "the broker is Kafka 0.10.2.0"},
		{"newer than a 2.1+ broker is the operator's call", sarama.V3_9_0_0, sarama.V2_4_0_0, ""},
		{"old versions against 4.x", sarama.V1_1_0_0, sarama.V4_0_0_0, "KIP-896"},
		{"2.1 against 4.x", sarama.V2_1_0_0, sarama.V4_0_0_0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkExplicit(tt.explicit, tt.detected)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkExplicit(%s, %s) = %v", tt.explicit, tt.detected, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkExplicit(%s, %s) = %v, want error containing %q", tt.explicit, tt.detected, err, tt.wantErr)
			}
		})
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
		{"2.0.1", sarama.V2_0_1_0, ""},
		{"1.1.1", sarama.V1_1_1_0, ""},
		{"0.10.2.0", sarama.V0_10_2_0, ""},
		{"0.10.1.1", sarama.KafkaVersion{}, "at least 0.10.2"},
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
