package seed_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

// EnvBig sets the size of TestSeedBig in offsets (e.g. 100000); unset, the test is skipped.
const EnvBig = "ZK2KAFKA_SEED_BIG"

// TestSeedBig seeds the benchmark shape (groups of 10 topics x 10 partitions over a shared pool
// of 10 topics) at the size asked for, logs the timings, reads every znode back and removes them.
func TestSeedBig(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(EnvBig))
	if err != nil || n < 100 {
		t.Skipf("set %s to a number of offsets >= 100 to run", EnvBig)
	}
	st := stacktest.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	chroot := "/" + stacktest.Name(t, "chroot")
	conn := connect(t, st.ZK)
	t.Cleanup(func() {
		start := time.Now()
		removeTree(t, conn, chroot)
		t.Logf("removed %s in %s", chroot, time.Since(start).Round(time.Millisecond))
	})
	spec := seed.Spec{Seed: 7, Groups: n / 100, TopicsPerGroup: 10, Topics: 10, Partitions: 10, Records: 1000,
		GroupPrefix: stacktest.Name(t, "g"), TopicPrefix: stacktest.Name(t, "t"), Chroot: chroot, LiveGroups: 1}
	start := time.Now()
	res, err := seed.Run(ctx, st.ZK, []string{st.Kafka}, spec, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	total := time.Since(start)
	t.Logf("seeded %d offsets in %s: kafka %s (%d records), zookeeper offsets %s (%.0f znodes/s), live %s",
		res.Offsets, total.Round(time.Millisecond), res.KafkaTime.Round(time.Millisecond), res.Records,
		res.ZKTime.Round(time.Millisecond), float64(res.Offsets)/res.ZKTime.Seconds(), res.LiveTime.Round(time.Millisecond))

	start = time.Now()
	consumers := res.Paths().Consumers()
	tree := readTree(t, conn, consumers)
	found := 0
	for path, data := range tree {
		g, topic, p, ok := offsetPath(strings.TrimPrefix(path, consumers+"/"))
		if !ok {
			continue
		}
		found++
		want, ok := res.Expected(migrate.Key{Group: g, Topic: topic, Partition: p})
		if !ok || data != strconv.FormatInt(want, 10) {
			t.Errorf("%s = %q, want %d (seeded %v)", path, data, want, ok)
		}
	}
	if found != res.Offsets {
		t.Errorf("found %d offset znodes, want %d", found, res.Offsets)
	}
	t.Logf("read back %d znodes in %s", len(tree), time.Since(start).Round(time.Millisecond))
}
