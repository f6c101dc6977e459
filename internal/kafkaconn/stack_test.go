package kafkaconn

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/stacktest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// testCtx is a context for one test's calls, bounded so a hang fails instead of stalling.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestNegotiateAndOpenOnStack settles the level against the real broker (3.9 on the zk
// profile, 4.x on kraft) and opens a client with it that can read __consumer_offsets' metadata.
func TestNegotiateAndOpenOnStack(t *testing.T) {
	s := stacktest.Get(t)
	ctx := testCtx(t, time.Minute)
	cfg := Config{Bootstrap: []string{s.Kafka}}
	v, err := Negotiate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sarama.KafkaVersion{"zk": sarama.V3_9_0_0, "kraft": sarama.V4_0_0_0}[s.Profile]
	if want != (sarama.KafkaVersion{}) && v != want {
		t.Errorf("negotiated %s on the %s profile, want %s", v, s.Profile, want)
	}
	conf, err := SaramaConfig(cfg, v)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ctx, cfg, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := Call(ctx, func() (struct{}, error) { return struct{}{}, c.RefreshMetadata(OffsetsTopic) }); err != nil && !Retriable(err) {
		t.Fatalf("metadata of %s: %v", OffsetsTopic, err)
	}
	if got := c.Config().Version; got != v {
		t.Errorf("client speaks %s, want %s", got, v)
	}
}
