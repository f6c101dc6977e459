package seed_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestRun(t *testing.T) {
	st := stacktest.Get(t)
	tests := []struct {
		name string
		// chrootInConnect passes the chroot in the connect string instead of the Spec.
		chrootInConnect bool
		skipKafka       bool
		live            int
	}{
		{name: "kafka and live consumers", live: 2},
		{name: "chroot in connect string", chrootInConnect: true},
		{name: "zookeeper only, topics missing", skipKafka: true, live: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			chroot := "/" + stacktest.Name(t, "chroot")
			spec := seed.Spec{Seed: 42, Groups: 5, TopicsPerGroup: 2, Topics: 3, Partitions: 4, Records: 50,
				GroupPrefix: stacktest.Name(t, "g"), TopicPrefix: stacktest.Name(t, "t"),
				LiveGroups: tt.live, SkipKafka: tt.skipKafka}
			servers := st.ZK
			if tt.chrootInConnect {
				servers += chroot
			} else {
				spec.Chroot = chroot
			}
			conn := connect(t, st.ZK)
			t.Cleanup(func() { removeTree(t, conn, chroot) })

			res, err := seed.Run(ctx, servers, []string{st.Kafka}, spec, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			if res.Spec.Chroot != chroot {
				t.Fatalf("result chroot %q, want %q", res.Spec.Chroot, chroot)
			}
			if res.Created != int64(res.Offsets) || res.Overwritten != 0 || res.Offsets != 5*2*4 {
				t.Errorf("first run: offsets %d created %d overwritten %d, want 40 created", res.Offsets, res.Created, res.Overwritten)
			}
			checkOffsets(t, conn, res)
			if !tt.skipKafka {
				checkLogEnds(t, st.Kafka, res.Spec)
			}
			checkLive(t, conn, res)

			// A re-run overwrites what is there, here a clobbered offset, and adds no records.
			k := migrate.Key{Group: res.Spec.GroupName(1), Topic: res.Spec.TopicName(res.Spec.GroupTopic(1, 1)), Partition: 3}
			clobbered := res.Paths().Offset(k.Group, k.Topic, k.Partition)
			if _, err := conn.Set(clobbered, []byte("-1"), -1); err != nil {
				t.Fatal(err)
			}
			spec.LiveGroups = 0
			again, err := seed.Run(ctx, servers, []string{st.Kafka}, spec, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Created != 0 || again.Overwritten != int64(again.Offsets) || again.Records != 0 {
				t.Errorf("re-run: created %d overwritten %d records %d, want 0, %d, 0", again.Created, again.Overwritten, again.Records, again.Offsets)
			}
			checkOffsets(t, conn, again)
			if !tt.skipKafka {
				checkLogEnds(t, st.Kafka, again.Spec)
			}

			// Closing the seeding session removes the live registrations, and only them.
			res.Close()
			checkGone(t, conn, res)
			checkOffsets(t, conn, again)
		})
	}
}

// checkOffsets reads every znode under the chroot and compares the offsets with Expected, both
// ways: nothing missing, nothing extra.
func checkOffsets(t *testing.T, conn *zk.Conn, res *seed.Result) {
	t.Helper()
	consumers := res.Paths().Consumers()
	tree := readTree(t, conn, consumers)
	found := 0
	for path, data := range tree {
		g, topic, p, ok := offsetPath(strings.TrimPrefix(path, consumers+"/"))
		if !ok {
			continue
		}
		found++
		k := migrate.Key{Group: g, Topic: topic, Partition: p}
		want, ok := res.Expected(k)
		if !ok {
			t.Errorf("%s: offset znode %q not in the spec", path, data)
			continue
		}
		if data != strconv.FormatInt(want, 10) {
			t.Errorf("%s = %q, want %d", path, data, want)
		}
	}
	if found != res.Offsets {
		t.Errorf("found %d offset znodes under %s, want %d", found, consumers, res.Offsets)
	}
}

func checkLogEnds(t *testing.T, kafka string, s seed.Spec) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	client, err := sarama.NewClient([]string{kafka}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, topic := range s.TopicNames() {
		for p := range s.Partitions {
			end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
			if err != nil {
				t.Fatalf("log end of %s/%d: %v", topic, p, err)
			}
			start, err := client.GetOffset(topic, p, sarama.OffsetOldest)
			if err != nil {
				t.Fatalf("log start of %s/%d: %v", topic, p, err)
			}
			if end != int64(s.Records) || start != 0 {
				t.Errorf("%s/%d: log [%d, %d), want [0, %d)", topic, p, start, end, s.Records)
			}
		}
	}
}

// checkLive checks the registrations against the Scala consumer's layout: an ephemeral id znode
// with the subscription JSON, and an ephemeral owner per partition holding "<id>-0".
func checkLive(t *testing.T, conn *zk.Conn, res *seed.Result) {
	t.Helper()
	s, paths := res.Spec, res.Paths()
	if len(res.Live) != s.LiveGroups {
		t.Fatalf("%d live consumers, want %d", len(res.Live), s.LiveGroups)
	}
	for g := range s.Groups {
		group := s.GroupName(g)
		ids, _, err := conn.Children(paths.Group(group) + "/ids")
		if g >= s.LiveGroups {
			if err == nil && len(ids) > 0 {
				t.Errorf("group %s is not live but has ids %v", group, ids)
			}
			continue
		}
		lc := res.Live[g]
		if err != nil || !slices.Equal(ids, []string{lc.ID}) || lc.Group != group {
			t.Fatalf("group %s: ids %v (%v), want [%s]", group, ids, err, lc.ID)
		}
		if !strings.HasPrefix(lc.ID, group+"_") {
			t.Errorf("consumer id %q does not start with %q", lc.ID, group+"_")
		}
		data, stat, err := conn.Get(paths.ID(group, lc.ID))
		if err != nil || stat.EphemeralOwner == 0 {
			t.Fatalf("id znode of %s: %v, ephemeral owner %x", group, err, stat.EphemeralOwner)
		}
		var reg struct {
			Version      int            `json:"version"`
			Subscription map[string]int `json:"subscription"`
			Pattern      string         `json:"pattern"`
			Timestamp    string         `json:"timestamp"`
		}
		if err := json.Unmarshal(data, &reg); err != nil {
			t.Fatalf("id znode of %s: %q: %v", group, data, err)
		}
		if reg.Version != 1 || reg.Pattern != "static" || reg.Timestamp == "" || len(reg.Subscription) != s.TopicsPerGroup {
			t.Errorf("id znode of %s: %s", group, data)
		}
		for j := range s.TopicsPerGroup {
			topic := s.TopicName(s.GroupTopic(g, j))
			if reg.Subscription[topic] != 1 {
				t.Errorf("id znode of %s: subscription lacks %s: %s", group, topic, data)
			}
			for p := range s.Partitions {
				data, stat, err := conn.Get(paths.Owner(group, topic, p))
				if err != nil || string(data) != lc.ID+"-0" || stat.EphemeralOwner == 0 {
					t.Errorf("owner %s/%s/%d = %q (%v), want ephemeral %q", group, topic, p, data, err, lc.ID+"-0")
				}
			}
		}
	}
}

// checkGone waits for the ephemeral znodes of a closed session to be removed: no /ids/<id> and
// no /owners/<t>/<p> may be left anywhere under /consumers. ZooKeeper removes them when it
// commits the session close, so this normally passes on the first look.
func checkGone(t *testing.T, conn *zk.Conn, res *seed.Result) {
	t.Helper()
	consumers := res.Paths().Consumers()
	var left []string
	for range 50 {
		left = left[:0]
		for path := range readTree(t, conn, consumers) {
			f := strings.Split(strings.TrimPrefix(path, consumers+"/"), "/")
			if (len(f) == 3 && f[1] == "ids") || (len(f) == 4 && f[1] == "owners") {
				left = append(left, path)
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("after Close, still there: %v", left)
}
