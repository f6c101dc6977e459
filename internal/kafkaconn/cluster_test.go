package kafkaconn

import (
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestClusterVersion: a cluster whose brokers are of two releases (a rolling upgrade) is
// spoken to at the oldest one's level, whichever broker answered Negotiate; an explicit
// --kafka-version above an old broker's release line is refused naming that broker; a broker
// that cannot be asked is passed over.
func TestClusterVersion(t *testing.T) {
	kafka21 := apisOf([3]int16{8, 0, 6}, [3]int16{9, 0, 5}, [3]int16{18, 0, 2}, [3]int16{3, 0, 7}, [3]int16{1, 0, 10})
	mock := func(apis map[int16]apiRange) string {
		mb := sarama.NewMockBroker(t, 1)
		t.Cleanup(mb.Close)
		mb.SetHandlerByMap(map[string]sarama.MockResponse{"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(apiKeys(apis))})
		return mb.Addr()
	}
	newer, older := mock(kafka21), mock(kafka0102)
	down := "127.0.0.1:1" // nothing listens there
	cases := []struct {
		name    string
		version string
		level   sarama.KafkaVersion // what Negotiate settled (zero: 2.1, the first broker's)
		addrs   []string
		want    sarama.KafkaVersion
		err     string
	}{
		{name: "one release", version: VersionAuto, addrs: []string{newer}, want: sarama.V2_1_0_0},
		{name: "an older broker after a newer one", version: VersionAuto, addrs: []string{newer, older}, want: sarama.V0_10_2_0},
		{name: "a broker that cannot be asked is passed over", version: VersionAuto, addrs: []string{down, newer}, want: sarama.V2_1_0_0},
		{name: "an explicit version above the older broker's line", version: "2.1.0", addrs: []string{newer, older},
			err: "kafka broker " + older + ": kafka version 2.1.0: the broker is Kafka 0.10.2.0"},
		{name: "an explicit version every broker has", version: "0.10.2", level: sarama.V0_10_2_0, addrs: []string{newer, older}, want: sarama.V0_10_2_0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Bootstrap: []string{newer}, DialTimeout: 2 * time.Second, Version: tc.version}
			level := tc.level
			if level == (sarama.KafkaVersion{}) {
				level = sarama.V2_1_0_0
			}
			got, err := ClusterVersion(testCtx(t, time.Minute), cfg, level, tc.addrs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ClusterVersion = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ClusterVersion = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
