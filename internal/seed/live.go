package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
)

// liveHost stands in for the hostname in consumer ids, so seeded registrations are recognisable.
const liveHost = "zk2kafka-seed"

// LiveConsumer is one live legacy registration: /consumers/<Group>/ids/<ID> and an owner znode
// holding "<ID>-0" for every partition of the group's topics.
type LiveConsumer struct {
	Group string
	ID    string
}

// Owner is the data of the owner znodes: the consumer thread id "<consumer id>-<thread>".
func (l LiveConsumer) Owner() string { return l.ID + "-0" }

// registration is the JSON the Scala ZookeeperConsumerConnector.registerConsumerInZK wrote to
// /ids/<id>; field order and the string timestamp are as Kafka's Json.encode produced them.
type registration struct {
	Version      int            `json:"version"`
	Subscription map[string]int `json:"subscription"`
	Pattern      string         `json:"pattern"`
	Timestamp    string         `json:"timestamp"`
}

// consumerID is built like the Scala consumer's "<group>_<host>-<millis>-<8 hex of a uuid>":
// unique per run, so a second seeding session never collides with a first one's ids.
func consumerID(group string, now time.Time) string {
	return fmt.Sprintf("%s_%s-%d-%08x", group, liveHost, now.UnixMilli(), rand.Uint32())
}

// registerLive creates the live registrations of the first s.LiveGroups groups on conn, whose
// session then owns them: they vanish when it closes. Each group subscribes to its topics with
// one stream (thread 0) and owns every partition of them.
func registerLive(ctx context.Context, log *slog.Logger, conn *zk.Conn, inflight int, s Spec, paths Paths) ([]LiveConsumer, error) {
	now := time.Now()
	live := make([]LiveConsumer, s.LiveGroups)
	for g := range live {
		live[g] = LiveConsumer{Group: s.GroupName(g), ID: consumerID(s.GroupName(g), now)}
	}
	conns := []*zk.Conn{conn}
	err := pipeline(ctx, log, "live consumer ids", conns, inflight, len(live), func(ctx context.Context, c *zk.Conn, g int) error {
		reg := registration{Version: 1, Subscription: map[string]int{}, Pattern: "static",
			Timestamp: strconv.FormatInt(now.UnixMilli(), 10)}
		for j := range s.TopicsPerGroup {
			reg.Subscription[s.TopicName(s.GroupTopic(g, j))] = 1
		}
		data, err := json.Marshal(reg)
		if err != nil {
			return fmt.Errorf("group %q: encode registration: %w", live[g].Group, err)
		}
		for _, dir := range []string{paths.Group(live[g].Group) + "/ids", paths.Group(live[g].Group) + "/owners"} {
			if err := ensure(ctx, c, dir); err != nil {
				return fmt.Errorf("group %q: %w", live[g].Group, err)
			}
		}
		if err := createEphemeral(ctx, c, paths.ID(live[g].Group, live[g].ID), data); err != nil {
			return fmt.Errorf("group %q: %w", live[g].Group, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	tpg, parts := s.TopicsPerGroup, int(s.Partitions)
	err = pipeline(ctx, log, "live owner topics", conns, inflight, len(live)*tpg, func(ctx context.Context, c *zk.Conn, i int) error {
		g, topic := i/tpg, s.TopicName(s.GroupTopic(i/tpg, i%tpg))
		if err := ensure(ctx, c, paths.OwnersDir(live[g].Group, topic)); err != nil {
			return fmt.Errorf("group %q topic %q: %w", live[g].Group, topic, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = pipeline(ctx, log, "live owners", conns, inflight, len(live)*tpg*parts, func(ctx context.Context, c *zk.Conn, i int) error {
		gt, p := i/parts, int32(i%parts)
		g, topic := gt/tpg, s.TopicName(s.GroupTopic(gt/tpg, gt%tpg))
		if err := createEphemeral(ctx, c, paths.Owner(live[g].Group, topic, p), []byte(live[g].Owner())); err != nil {
			return fmt.Errorf("group %q topic %q partition %d: %w", live[g].Group, topic, p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return live, nil
}
