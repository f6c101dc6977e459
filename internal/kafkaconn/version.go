package kafkaconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/IBM/sarama"
)

// MinVersion is the lowest protocol level zk2kafka speaks, for every client: Kafka 0.10.2, the
// first release whose OffsetFetch (v2, KIP-88) returns every committed offset of a group without
// being told its partitions. A plan, a verify and an export must see the commits Kafka holds for
// partitions ZooKeeper never had; older brokers can only answer for partitions named in advance,
// and are refused (see refusal). docs/security.md tables what each release gives up.
var MinVersion = sarama.V0_10_2_0

// Kafka API keys used by the version rule (values from the Kafka protocol).
const (
	apiFetch            int16 = 1
	apiListOffsets      int16 = 2
	apiMetadata         int16 = 3
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
// showing it is at least that release. The level decides which version sarama builds each
// request at (its constructors read Config.Version); sarama then clamps every request to the
// broker's advertised range (restrictApiVersion), which only ever lowers it. From 2.1 down the
// table names every release line, so requests are built for the broker itself and never rely on
// a clamp: a clamp keeps the fields of the newer version, and some are unsafe in an older one
// (see kafkawriter's newCommitRequest and metadata).
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
	{sarama.V2_0_0_0, maxAtLeast(apiOffsetCommit, 4)},     // throttle after quota (KIP-219)
	{sarama.V1_1_0_0, maxAtLeast(apiFetch, 7)},            // fetch sessions (KIP-227)
	{sarama.V1_0_0_0, maxAtLeast(apiMetadata, 5)},         // offline replicas (KIP-112)
	{sarama.V0_11_0_0, maxAtLeast(apiOffsetCommit, 3)},    // throttle time (KIP-124)
	{sarama.V0_10_2_0, maxAtLeast(apiOffsetFetch, 2)},     // all of a group's offsets (KIP-88)
}

// versionFromAPIs maps a broker's ApiVersions to the sarama version to configure.
func versionFromAPIs(apis map[int16]apiRange) (sarama.KafkaVersion, error) {
	for _, m := range milestones {
		if m.ok(apis) {
			return m.version, nil
		}
	}
	return sarama.KafkaVersion{}, refusal(apis)
}

// refusal says why a broker older than MinVersion cannot be migrated to, naming its release as
// its ApiVersions tell it (only 0.10.0 and later answer ApiVersions at all, KIP-35).
func refusal(apis map[int16]apiRange) error {
	oc, ok := apis[apiOffsetCommit]
	if !ok {
		return errors.New("broker does not advertise OffsetCommit")
	}
	of := apis[apiOffsetFetch]
	release := "0.10.0"
	if maxAtLeast(apiListOffsets, 1)(apis) {
		release = "0.10.1"
	}
	return fmt.Errorf("broker is Kafka %s (OffsetCommit up to v%d, OffsetFetch up to v%d): Kafka %s or newer is required: "+
		"before OffsetFetch v2 (KIP-88) the coordinator only answers for partitions named in advance, so commits Kafka holds "+
		"on other partitions would go unseen by plan, verify and export", release, oc.max, of.max, MinVersion)
}

func parseVersion(s string) (sarama.KafkaVersion, error) {
	v, err := sarama.ParseKafkaVersion(s)
	if err != nil {
		return sarama.KafkaVersion{}, fmt.Errorf("kafka version %q: expected \"auto\" or X.Y.Z: %w", s, err)
	}
	if !v.IsAtLeast(MinVersion) {
		return sarama.KafkaVersion{}, fmt.Errorf("kafka version %q: at least %s is required (OffsetFetch v2, KIP-88)", s, MinVersion)
	}
	return v, nil
}

// checkExplicit refuses a --kafka-version that would build requests the broker cannot take
// safely: below 2.1 against Kafka 4.x, which removed those versions (KIP-896); and, against a
// broker older than 2.1, a version of a newer release line than the broker's own. sarama would
// clamp each request down to the broker's range but keep the newer version's fields: a Metadata
// request built for 0.11+ and clamped to 0.10.2's v2 loses allow_auto_topic_creation, and the
// broker would create a missing topic the plan only asked about.
func checkExplicit(explicit, detected sarama.KafkaVersion) error {
	if detected.IsAtLeast(sarama.V4_0_0_0) && !explicit.IsAtLeast(sarama.V2_1_0_0) {
		return fmt.Errorf("kafka version %s: the broker is Kafka 4.x (from its ApiVersions), which removed the request versions of releases before 2.1 (KIP-896)", explicit)
	}
	if detected.IsAtLeast(sarama.V2_1_0_0) {
		return nil
	}
	for i, m := range milestones {
		if m.version == detected && i > 0 && explicit.IsAtLeast(milestones[i-1].version) {
			return fmt.Errorf("kafka version %s: the broker is Kafka %s (from its ApiVersions): give at most that release line, or auto", explicit, detected)
		}
	}
	return nil
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
