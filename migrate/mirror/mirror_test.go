package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// TestMirrorPhases checks the first sync of one group in each situation of a rollover: the
// phase, what is written where, and that no store moves backwards.
func TestMirrorPhases(t *testing.T) {
	cases := []struct {
		name    string
		zk      map[int32]int64
		live    bool
		kafka   map[int32]int64
		state   string // Kafka group state; "" none
		members int
		reverse bool

		phase     mirror.Phase
		toKafka   map[string]int64 // mirror writes into Kafka, "t/p" -> offset
		toZK      map[string]int64
		wantKafka map[string]int64 // Kafka afterwards
		wantZK    map[int32]int64  // ZooKeeper afterwards
	}{
		{name: "zk ahead and missing in kafka: mirrored", zk: map[int32]int64{0: 10, 1: 20}, kafka: map[int32]int64{1: 15}, state: "Empty",
			phase: mirror.PhaseZKPrimary, toKafka: map[string]int64{"t/0": 10, "t/1": 20},
			wantKafka: map[string]int64{"t/0": 10, "t/1": 20}, wantZK: map[int32]int64{0: 10, 1: 20}},
		{name: "legacy consumers alive, kafka passive: mirrored", zk: map[int32]int64{0: 10}, live: true,
			phase: mirror.PhaseZKPrimary, toKafka: map[string]int64{"t/0": 10},
			wantKafka: map[string]int64{"t/0": 10}, wantZK: map[int32]int64{0: 10}},
		{name: "equal: nothing to mirror", zk: map[int32]int64{0: 10}, kafka: map[int32]int64{0: 10}, state: "Empty",
			phase: mirror.PhaseZKPrimary, toKafka: map[string]int64{},
			wantKafka: map[string]int64{"t/0": 10}, wantZK: map[int32]int64{0: 10}},
		{name: "kafka ahead, no legacy consumer: kafka-primary, kafka never lowered", zk: map[int32]int64{0: 10, 1: 30}, kafka: map[int32]int64{0: 12, 1: 20}, state: "Empty",
			phase: mirror.PhaseKafkaPrimary, toKafka: map[string]int64{},
			wantKafka: map[string]int64{"t/0": 12, "t/1": 20}, wantZK: map[int32]int64{0: 10, 1: 30}},
		{name: "kafka ahead on one partition, legacy alive: switching, the other mirrored forward", zk: map[int32]int64{0: 10, 1: 30}, live: true, kafka: map[int32]int64{0: 12, 1: 20}, state: "Empty",
			phase: mirror.PhaseSwitching, toKafka: map[string]int64{"t/1": 30},
			wantKafka: map[string]int64{"t/0": 12, "t/1": 30}, wantZK: map[int32]int64{0: 10, 1: 30}},
		{name: "kafka group has members: kafka-primary, no admin commit tried", zk: map[int32]int64{0: 10}, kafka: map[int32]int64{0: 5}, state: "Stable", members: 1,
			phase: mirror.PhaseKafkaPrimary, toKafka: map[string]int64{},
			wantKafka: map[string]int64{"t/0": 5}, wantZK: map[int32]int64{0: 10}},
		{name: "kafka group has members and legacy alive: switching, no admin commit", zk: map[int32]int64{0: 10}, live: true, kafka: map[int32]int64{0: 5}, state: "Stable", members: 1,
			phase: mirror.PhaseSwitching, toKafka: map[string]int64{},
			wantKafka: map[string]int64{"t/0": 5}, wantZK: map[int32]int64{0: 10}},
		{name: "reverse: kafka-primary mirrored into zookeeper forward only", zk: map[int32]int64{0: 10, 1: 30}, kafka: map[int32]int64{0: 12, 1: 20}, state: "Empty", reverse: true,
			phase: mirror.PhaseKafkaPrimary, toKafka: map[string]int64{}, toZK: map[string]int64{"t/0": 12},
			wantKafka: map[string]int64{"t/0": 12, "t/1": 20}, wantZK: map[int32]int64{0: 12, 1: 30}},
		{name: "reverse: a partition only kafka has is created in zookeeper", zk: map[int32]int64{0: 10}, kafka: map[int32]int64{0: 10, 1: 7}, state: "Stable", members: 1, reverse: true,
			phase: mirror.PhaseKafkaPrimary, toKafka: map[string]int64{}, toZK: map[string]int64{"t/1": 7},
			wantKafka: map[string]int64{"t/0": 10, "t/1": 7}, wantZK: map[int32]int64{0: 10, 1: 7}},
		{name: "reverse never writes while legacy consumers are alive", zk: map[int32]int64{0: 10}, live: true, kafka: map[int32]int64{0: 12}, state: "Stable", members: 1, reverse: true,
			phase: mirror.PhaseSwitching, toKafka: map[string]int64{}, toZK: map[string]int64{},
			wantKafka: map[string]int64{"t/0": 12}, wantZK: map[int32]int64{0: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.m.Reverse = tc.reverse
			for p, o := range tc.zk {
				f.legacy.SetOffset("g", "t", p, o)
			}
			if tc.live {
				f.legacy.SetLive("g", "ids/c1")
			}
			for p, o := range tc.kafka {
				f.kafka.SetCommitted("g", "t", p, o)
			}
			if tc.state != "" {
				f.kafka.SetGroup("g", tc.state, tc.members)
			}
			f.start(t)
			s := f.obs.next(t, "g")
			if s.Phase != tc.phase {
				t.Errorf("phase %s, want %s", s.Phase, tc.phase)
			}
			check := func(what string, dir mirror.Direction, want map[string]int64) {
				got := map[string]int64{}
				for _, w := range s.Writes {
					if w.Direction == dir && w.Reason == mirror.ReasonMirror {
						if w.Err != nil || w.Refused {
							t.Errorf("%s %s: err %v refused %v", what, w.TopicPartition, w.Err, w.Refused)
						}
						got[w.TopicPartition.String()] = w.To
					}
				}
				if want == nil {
					want = map[string]int64{}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %v, want %v", what, got, want)
				}
			}
			check("writes into kafka", mirror.ToKafka, tc.toKafka)
			check("writes into zookeeper", mirror.ToZK, tc.toZK)
			if got := kafkaOffsets(t, f.kafka, "g"); !reflect.DeepEqual(got, tc.wantKafka) {
				t.Errorf("kafka afterwards %v, want %v", got, tc.wantKafka)
			}
			for p, want := range tc.wantZK {
				if got, _ := f.legacy.Offset("g", "t", p); got != want {
					t.Errorf("zookeeper t/%d afterwards %d, want %d", p, got, want)
				}
			}
		})
	}
}

// TestMirrorFollowsChanges: a watched change is mirrored; a ZooKeeper offset going backwards
// (a reset, a restarted legacy consumer) is never copied over a higher Kafka offset.
func TestMirrorFollowsChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.legacy.SetOffset("g", "t", 0, 10)
		f.legacy.SetLive("g", "ids/c1")
		f.start(t)
		f.obs.next(t, "g")
		// The watcher's report of g once armed syncs g again, perhaps after the first step's
		// change is made: wait until the mirror is idle and take every report so far, so that
		// each step reads the sync of its own change.
		synctest.Wait()
		f.obs.drain()
		steps := []struct {
			zk         int64
			wantWrite  bool
			wantKafka  int64
			wantRewind string // the rewind reported, "" for none
		}{
			{zk: 11, wantWrite: true, wantKafka: 11},
			{zk: 50, wantWrite: true, wantKafka: 50},
			{zk: 40, wantWrite: false, wantKafka: 50, wantRewind: "t/0 50->40"}, // backwards in ZooKeeper: Kafka stays, flagged
			{zk: 50, wantWrite: false, wantKafka: 50},
			{zk: 51, wantWrite: true, wantKafka: 51},
		}
		for i, st := range steps {
			f.legacy.SetOffset("g", "t", 0, st.zk)
			f.watch.fire(t, "g")
			s := f.obs.next(t, "g")
			w, wrote := writes(s, mirror.ReasonMirror)["t/0"]
			if wrote != st.wantWrite || (wrote && (w.To != st.zk || w.Err != nil)) {
				t.Errorf("step %d (zk %d): write %v %+v, want write %v", i, st.zk, wrote, w, st.wantWrite)
			}
			var rewinds []string
			for _, r := range s.Rewinds {
				rewinds = append(rewinds, fmt.Sprintf("%s %d->%d", r.TopicPartition, r.From, r.To))
			}
			if got := strings.Join(rewinds, ","); got != st.wantRewind {
				t.Errorf("step %d (zk %d): rewinds %q, want %q", i, st.zk, got, st.wantRewind)
			}
			if got := kafkaOffsets(t, f.kafka, "g")["t/0"]; got != st.wantKafka {
				t.Errorf("step %d (zk %d): kafka %d, want %d", i, st.zk, got, st.wantKafka)
			}
			wantPhase := mirror.PhaseZKPrimary
			if st.zk < st.wantKafka {
				wantPhase = mirror.PhaseSwitching // Kafka ahead while legacy consumers live
			}
			if s.Phase != wantPhase {
				t.Errorf("step %d: phase %s, want %s", i, s.Phase, wantPhase)
			}
		}
	})
}

// TestMirrorRewindSurvivesAFailedSync: a rewind read by a sync that then fails (the topics could
// not be described) is reported by the next sync, not lost with the failed one.
func TestMirrorRewindSurvivesAFailedSync(t *testing.T) {
	f := newFixture()
	f.legacy.SetOffset("g", "t", 0, 50)
	f.legacy.SetLive("g", "ids/c1")
	f.start(t)
	f.obs.next(t, "g")
	f.kafka.FailTopics(errors.New("metadata unavailable"))
	f.legacy.SetOffset("g", "t", 0, 40)
	f.watch.fire(t, "g")
	if err := f.obs.nextFailure(t); !strings.Contains(err.Error(), "metadata unavailable") {
		t.Fatalf("sync failure %v, want the describe's", err)
	}
	f.kafka.FailTopics(nil)
	f.watch.fire(t, "g")
	s := f.obs.next(t, "g")
	if len(s.Rewinds) != 1 || s.Rewinds[0].From != 50 || s.Rewinds[0].To != 40 {
		t.Fatalf("rewinds after the failed sync %+v, want t/0 50->40", s.Rewinds)
	}
}

// TestMirrorRefusedCommitIsAPhaseChange: the broker refusing an admin commit (the group became
// active between the read and the commit) makes the group kafka-primary; later changes are not
// retried against Kafka, so there is no storm of refused commits.
func TestMirrorRefusedCommitIsAPhaseChange(t *testing.T) {
	f := newFixture()
	ref := &refusing{}
	f.m.Committer = ref
	f.legacy.SetOffset("g", "t", 0, 10)
	f.start(t)
	s := f.obs.next(t, "g")
	if s.Phase != mirror.PhaseKafkaPrimary {
		t.Fatalf("phase after a refused commit %s, want %s", s.Phase, mirror.PhaseKafkaPrimary)
	}
	if w := writes(s, mirror.ReasonMirror)["t/0"]; !w.Refused || w.Err != nil {
		t.Errorf("write %+v: want refused, not an error", w)
	}
	for i := range 5 {
		f.legacy.SetOffset("g", "t", 0, int64(20+i))
		f.watch.fire(t, "g")
		if s := f.obs.next(t, "g"); s.Phase != mirror.PhaseKafkaPrimary || len(s.Writes) != 0 {
			t.Fatalf("change %d: phase %s writes %+v, want kafka-primary and none", i, s.Phase, s.Writes)
		}
	}
	if n := ref.calls.Load(); n != 1 {
		t.Errorf("%d commits tried, want 1", n)
	}
	// A rollback (legacy consumers back) makes ZooKeeper primary again.
	f.legacy.SetLive("g", "ids/c1")
	f.watch.fire(t, "g")
	if s := f.obs.next(t, "g"); s.Phase != mirror.PhaseSwitching {
		t.Errorf("phase after legacy consumers came back while Kafka refuses: %s, want switching", s.Phase)
	}
}

// TestMirrorKeepalive: unchanged offsets are re-committed once the keep-alive interval passed,
// including a partition only Kafka has, and at their unchanged value; the polls before that
// write nothing. It runs on synctest's clock, so each poll has run to its end when the test
// looks at what it wrote.
func TestMirrorKeepalive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture() // the mirror's clock and ticker are the bubble's
		f.m.Watcher = nil // its report of g once armed would be one more sync
		f.m.PollInterval = time.Minute
		f.m.KeepaliveInterval = 10 * time.Minute
		f.legacy.SetOffset("g", "t", 0, 10)
		f.kafka.SetCommitted("g", "t", 0, 10)
		f.kafka.SetCommitted("g", "t", 1, 33)
		f.kafka.SetGroup("g", "Empty", 0)
		f.start(t)
		// The first sync keeps alive at once: nobody knows when these offsets were committed.
		first := f.obs.next(t, "g")
		if got := len(writes(first, mirror.ReasonKeepalive)); got != 2 {
			t.Fatalf("first sync: %d keep-alive writes, want 2: %+v", got, first.Writes)
		}
		synctest.Wait()
		before := len(f.kafka.Commits())
		_, polls := f.kafka.Calls()

		// The polls at 1m to 9m: the keep-alive is not due yet, they write nothing.
		time.Sleep(9*time.Minute + 30*time.Second)
		synctest.Wait() // the mirror is idle: every poll up to now has run to its end
		if c := f.kafka.Commits(); len(c) != before {
			t.Fatalf("%d commits before the keep-alive was due, want %d: %+v", len(c), before, c[before:])
		}
		if synced := f.obs.drain(); len(synced) != 0 {
			t.Fatalf("groups synced by the polls before the keep-alive was due: %+v", synced)
		}
		if _, n := f.kafka.Calls(); n-polls != 9 { // nothing else read Kafka: the polls ran
			t.Fatalf("%d reads of the Kafka group states, want the 9 polls", n-polls)
		}

		// The poll at 10m: due.
		time.Sleep(time.Minute)
		synctest.Wait()
		s := f.obs.next(t, "g")
		ka := writes(s, mirror.ReasonKeepalive)
		if len(ka) != 2 {
			t.Fatalf("the sync at 10m: keep-alive writes %+v, want t/0 and t/1", s.Writes)
		}
		for k, want := range map[string]int64{"t/0": 10, "t/1": 33} {
			w := ka[k]
			if w.To != want || w.From == nil || *w.From != want || w.Err != nil {
				t.Errorf("keep-alive of %s: %+v, want %d unchanged", k, w, want)
			}
		}
		if got := kafkaOffsets(t, f.kafka, "g"); got["t/0"] != 10 || got["t/1"] != 33 {
			t.Errorf("kafka after the keep-alive %v: offsets changed", got)
		}
	})
}

// TestMirrorDryRunWritesNothing: without Execute the writes are reported, never made.
func TestMirrorDryRunWritesNothing(t *testing.T) {
	f := newFixture()
	f.m.Execute = false
	f.m.Reverse = true
	f.legacy.SetOffset("g", "t", 0, 10)
	f.legacy.SetOffset("h", "t", 0, 5)
	f.kafka.SetCommitted("h", "t", 0, 9)
	f.start(t)
	g := f.obs.next(t, "g")
	if w := writes(g, mirror.ReasonMirror)["t/0"]; w.To != 10 || !g.DryRun {
		t.Errorf("dry run of g: %+v, want a reported write of 10", g)
	}
	h := f.obs.next(t, "h")
	if w := writes(h, mirror.ReasonMirror)["t/0"]; w.To != 9 || w.Direction != mirror.ToZK {
		t.Errorf("dry run of h: %+v, want a reported reverse write of 9", h)
	}
	if n := len(f.kafka.Commits()); n != 0 {
		t.Errorf("%d commits in a dry run", n)
	}
	if got, _ := f.legacy.Offset("h", "t", 0); got != 5 {
		t.Errorf("zookeeper written in a dry run: %d", got)
	}
}

// TestMirrorCountsAnUnlistableOffsetsFolder: a group whose offsets folder could not be listed
// reports it as invalid whatever the topic filter (its topics are unknown), and nothing is
// written for it.
func TestMirrorCountsAnUnlistableOffsetsFolder(t *testing.T) {
	for _, topicRe := range []string{"", "^t$"} {
		t.Run(topicRe, func(t *testing.T) {
			f := newFixture()
			flt, err := migrate.NewFilter(nil, "", topicRe, "")
			if err != nil {
				t.Fatal(err)
			}
			f.m.Filter = flt
			f.legacy.SetGroup(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{
				{Topic: "", Partition: -1, Path: "/consumers/g/offsets", Invalid: "access denied (ACL): cannot list the group's topics"}}})
			f.start(t) // stopped, and its error checked, at the end of the test
			if st := f.obs.next(t, "g"); st.Invalid != 1 || len(st.Writes) != 0 {
				t.Errorf("status %+v, want 1 invalid and no writes", st)
			}
			if n := len(f.kafka.Commits()); n != 0 {
				t.Errorf("%d commits for a group whose offsets could not be listed", n)
			}
		})
	}
}

// TestKeepaliveUnknownRetention: with no --keepalive-interval the keep-alive is half the
// broker's offsets retention; a broker that cannot report it (Kafka before 0.11: retention 0)
// makes Run refuse to start instead of guessing an interval that could outlast a lowered
// retention. (Every other test here starts with a known retention or an interval.)
func TestKeepaliveUnknownRetention(t *testing.T) {
	f := newFixture()
	f.kafka.SetRetention(0)
	f.m.KeepaliveInterval = 0
	// The refusal comes before the run starts: Run returns it without being stopped. Were it
	// gone, the run would mirror until the deadline, then fail below instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	err := f.m.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "does not report offsets.retention.minutes") {
		t.Fatalf("Run = %v, want the refusal naming offsets.retention.minutes", err)
	}
}
