package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/IBM/sarama"
)

// MinVersion is the lowest protocol level zk2kafka speaks, for every client. Below 2.1 sarama
// would send OffsetCommit v0..v4 and OffsetFetch v0..v4, which Kafka 4.x rejects (KIP-896), and
// commits would carry no leader epoch field. offsetlog alone could read older brokers, but it
// only runs beside kafkawriter on the same cluster and --kafka-version (verify --via-topic), so
// one floor keeps one rule.
var MinVersion = sarama.V2_1_0_0

// Kafka API keys used by the version rule (values from the Kafka protocol).
const (
	apiOffsetCommit     int16 = 8
	apiOffsetFetch      int16 = 9
	apiJoinGroup        int16 = 11
	apiApiVersions      int16 = 18
	apiDescribeCluster  int16 = 60
	apiListTransactions int16 = 66
)

// apiRange is the [min, max] version a broker supports for one API.
type apiRange struct{ min, max int16 }

// milestone is a Kafka release recognisable from its ApiVersions: the first release whose
// broker advertises the given API at the given version.
type milestone struct {
	version sarama.KafkaVersion
	ok      func(apis map[int16]apiRange) bool
}

func maxAtLeast(api, v int16) func(map[int16]apiRange) bool {
	return func(apis map[int16]apiRange) bool { r, ok := apis[api]; return ok && r.max >= v }
}

// milestones, newest first. The rule: the effective version is the newest release whose marker
// the broker shows. Each marker is an API version introduced by that release, so a broker
// showing it is at least that release, and sarama's per-request negotiation (it clamps every
// request to the broker's advertised range) does the rest.
var milestones = []milestone{
	// 4.0 removed OffsetCommit v0/v1 (KIP-896): the first release with a minimum above 0.
	{sarama.V4_0_0_0, func(apis map[int16]apiRange) bool {
		r, ok := apis[apiOffsetCommit]
		return ok && r.min >= 2 && maxAtLeast(apiApiVersions, 4)(apis)
	}},
	{sarama.V3_9_0_0, maxAtLeast(apiApiVersions, 4)},      // KAFKA-17011
	{sarama.V3_8_0_0, maxAtLeast(apiListTransactions, 1)}, // KIP-994
	{sarama.V3_7_0_0, maxAtLeast(apiDescribeCluster, 1)},  // KIP-919
	{sarama.V3_2_0_0, maxAtLeast(apiJoinGroup, 9)},        // KIP-800
	{sarama.V3_0_0_0, maxAtLeast(apiOffsetFetch, 8)},      // KIP-709
	{sarama.V2_4_0_0, maxAtLeast(apiOffsetCommit, 8)},     // first flexible OffsetCommit
	{sarama.V2_3_0_0, maxAtLeast(apiOffsetCommit, 7)},     // KIP-345
	{sarama.V2_1_0_0, maxAtLeast(apiOffsetCommit, 6)},     // KIP-320 leader epoch
}

// versionFromAPIs maps a broker's ApiVersions to the sarama version to configure.
func versionFromAPIs(apis map[int16]apiRange) (sarama.KafkaVersion, error) {
	for _, m := range milestones {
		if m.ok(apis) {
			return m.version, nil
		}
	}
	oc, ok := apis[apiOffsetCommit]
	if !ok {
		return sarama.KafkaVersion{}, errors.New("broker does not advertise OffsetCommit")
	}
	return sarama.KafkaVersion{}, fmt.Errorf("broker supports OffsetCommit up to v%d: Kafka %s or newer is required", oc.max, MinVersion)
}

func parseVersion(s string) (sarama.KafkaVersion, error) {
	v, err := sarama.ParseKafkaVersion(s)
	if err != nil {
		return sarama.KafkaVersion{}, fmt.Errorf("kafka version %q: expected \"auto\" or X.Y.Z: %w", s, err)
	}
	if !v.IsAtLeast(MinVersion) {
		return sarama.KafkaVersion{}, fmt.Errorf("kafka version %q: at least %s is required (Kafka 4.x rejects older OffsetCommit versions)", s, MinVersion)
	}
	return v, nil
}

// probe connects to the bootstrap servers in order and returns the ApiVersions of the first
// that answers. When none answers, the error names every server and why.
func probe(ctx context.Context, cfg Config) (map[int16]apiRange, string, error) {
	var errs []error
	for _, addr := range cfg.Bootstrap {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		apis, err := probeOne(ctx, cfg, addr)
		if err == nil {
			return apis, addr, nil
		}
		aerr, fatal := describeProbeError(ctx, cfg, addr, err)
		if fatal {
			// Credentials and trust are the same for every broker: trying the next one would
			// only repeat the refusal under a misleading "not reachable".
			return nil, "", aerr
		}
		errs = append(errs, aerr)
	}
	return nil, "", fmt.Errorf("no kafka broker reachable at %v (%s): %w", cfg.Bootstrap, cfg.Security.Describe(), errors.Join(errs...))
}

func probeOne(ctx context.Context, cfg Config, addr string) (map[int16]apiRange, error) {
	// ApiVersions v3 needs 2.4; older brokers answer v0 (KIP-511).
	conf, err := SaramaConfig(cfg, sarama.V2_4_0_0)
	if err != nil {
		return nil, err
	}
	// The probe speaks ApiVersions itself; sarama's automatic one would hide the response.
	conf.ApiVersionsRequest = false
	b := sarama.NewBroker(addr)
	if err := b.Open(conf); err != nil {
		return nil, err
	}
	defer closeBroker(cfg.Logger, b)
	if _, err := Call(ctx, b.Connected); err != nil {
		return nil, err
	}
	resp, err := Call(ctx, func() (*sarama.ApiVersionsResponse, error) {
		return b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "zk2kafka", ClientSoftwareVersion: "1"})
	})
	if err == nil && resp.ErrorCode == int16(sarama.ErrUnsupportedVersion) {
		resp, err = Call(ctx, func() (*sarama.ApiVersionsResponse, error) {
			return b.ApiVersions(&sarama.ApiVersionsRequest{Version: 0})
		})
	}
	if err != nil {
		return nil, fmt.Errorf("api versions: %w", err)
	}
	if kerr := sarama.KError(resp.ErrorCode); kerr != sarama.ErrNoError {
		return nil, fmt.Errorf("api versions: %w", kerr)
	}
	apis := make(map[int16]apiRange, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		apis[k.ApiKey] = apiRange{min: k.MinVersion, max: k.MaxVersion}
	}
	return apis, nil
}

func closeBroker(log *slog.Logger, b *sarama.Broker) {
	// ErrNotConnected only says there was nothing to close.
	if err := b.Close(); err != nil && !errors.Is(err, sarama.ErrNotConnected) {
		log.Warn("close kafka broker connection", "broker", b.Addr(), "err", err)
	}
}
