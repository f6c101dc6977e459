package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

const (
	// zkConns is how many sessions share the bulk writes: one connection pipelines, several
	// spread the server's per-connection work; 8 seeded no faster than 4 (docs/benchmarks.md).
	zkConns = 4
	// zkInflight bounds the requests outstanding over all bulk connections: enough to keep
	// the 4 sessions' pipelines full (docs/benchmarks.md).
	zkInflight = 512
)

// Result is what a Run wrote. Expected offsets are recomputed from the Spec, so a Result stays
// small at any size. Close it to end the live registrations.
type Result struct {
	Spec Spec // with defaults applied, and the effective chroot

	Offsets     int   // offset znodes written
	Created     int64 // offset znodes that did not exist
	Overwritten int64 // offset znodes that existed and were set
	Records     int64 // records produced by this run (0 when the topics were already full)
	// Live lists the live registrations, one per live group, in group order.
	Live []LiveConsumer

	KafkaTime, ZKTime, LiveTime time.Duration

	live      *zk.Conn
	closeOnce sync.Once
}

// Expected returns the offset seeded for k, and false when k was not seeded.
func (r *Result) Expected(k migrate.Key) (int64, bool) { return r.Spec.Expected(k) }

// Paths is the layout the Result's znodes were written in.
func (r *Result) Paths() Paths { return Paths{Chroot: r.Spec.Chroot} }

// Close ends the seeding session that holds the live registrations: ZooKeeper removes their
// ephemeral znodes at once. It is safe to call more than once.
func (r *Result) Close() {
	r.closeOnce.Do(func() {
		if r.live != nil {
			r.live.Close()
		}
	})
}

// Run seeds Kafka (unless spec.SkipKafka) and then ZooKeeper. zkServers is a ZooKeeper connect
// string, optionally with a chroot ("h:p,h:p/kafka"), which must then agree with spec.Chroot.
// Re-running on existing topics and znodes is safe: topics are reused (their partition count
// must match), partitions are topped up to Records, offset znodes are overwritten.
func Run(ctx context.Context, zkServers string, kafkaBootstrap []string, spec Spec, log *slog.Logger) (*Result, error) {
	s := spec.WithDefaults()
	servers, chroot, err := splitServers(zkServers)
	if err != nil {
		return nil, err
	}
	if chroot != "" && s.Chroot != "" && chroot != s.Chroot {
		return nil, fmt.Errorf("chroot %q in the zookeeper connect string differs from the spec's %q", chroot, s.Chroot)
	}
	if s.Chroot == "" {
		s.Chroot = chroot
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("seed spec: %w", err)
	}
	if !s.SkipKafka && len(kafkaBootstrap) == 0 {
		return nil, errors.New("seed spec: kafka bootstrap servers are required unless SkipKafka is set")
	}
	log.Info("seeding", "groups", s.Groups, "topics", s.Topics, "topics_per_group", s.TopicsPerGroup,
		"partitions", s.Partitions, "records", s.Records, "offsets", s.Offsets(), "live_groups", s.LiveGroups,
		"chroot", s.Chroot, "seed", s.Seed)

	res := &Result{Spec: s, Offsets: s.Offsets()}
	if !s.SkipKafka {
		start := time.Now()
		if res.Records, err = seedKafka(ctx, log, kafkaBootstrap, s); err != nil {
			return nil, fmt.Errorf("seed kafka: %w", err)
		}
		res.KafkaTime = time.Since(start)
	}

	if err := seedZK(ctx, log, servers, s, res); err != nil {
		res.Close()
		return nil, err
	}
	log.Info("seeded", "offsets", res.Offsets, "created", res.Created, "overwritten", res.Overwritten,
		"records", res.Records, "live", len(res.Live), "kafka", res.KafkaTime.Round(time.Millisecond),
		"zk", res.ZKTime.Round(time.Millisecond), "live_time", res.LiveTime.Round(time.Millisecond))
	return res, nil
}

func seedZK(ctx context.Context, log *slog.Logger, servers []string, s Spec, res *Result) error {
	paths := Paths{Chroot: s.Chroot}
	conns := make([]*zk.Conn, 0, zkConns)
	for range zkConns {
		c, err := dial(ctx, servers)
		if err != nil {
			closeAll(conns)
			return err
		}
		conns = append(conns, c)
	}
	start := time.Now()
	counts, err := writeOffsets(ctx, log, conns, zkInflight, s, paths)
	closeAll(conns)
	if err != nil {
		return fmt.Errorf("seed zookeeper offsets: %w", err)
	}
	res.ZKTime = time.Since(start)
	res.Created, res.Overwritten = counts.created.Load(), counts.overwritten.Load()

	if s.LiveGroups == 0 {
		return nil
	}
	start = time.Now()
	live, err := dial(ctx, servers)
	if err != nil {
		return err
	}
	res.live = live
	if res.Live, err = registerLive(ctx, log, live, zkInflight, s, paths); err != nil {
		return fmt.Errorf("seed live registrations: %w", err)
	}
	res.LiveTime = time.Since(start)
	return nil
}
