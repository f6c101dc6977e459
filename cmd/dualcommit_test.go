package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zk2kafka/zk2kafka/legacy"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// unopenable fails the test if a command opens a store: bad flags must stop it before.
type unopenable struct{ t *testing.T }

func (u unopenable) OpenLegacy(context.Context, *globalOptions, *deps) (*legacy.Source, error) {
	u.t.Error("ZooKeeper opened despite invalid flags")
	return nil, context.Canceled
}

func (u unopenable) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	u.t.Error("Kafka opened despite invalid flags")
	return nil, nil, context.Canceled
}

func TestDualCommitValidate(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--resync-interval", "10ms"}, "--resync-interval: 10ms is too short"},
		{[]string{"--poll-interval", "1ms"}, "--poll-interval: 1ms is too short"},
		{[]string{"--keepalive-interval", "-1s"}, "--keepalive-interval"},
		{[]string{"--keepalive-interval", "10ms"}, "--keepalive-interval"},
		{[]string{"--max-commits-per-second", "-5"}, "--max-commits-per-second"},
		{[]string{"--max-commits-per-second", "1e-12"}, "--max-commits-per-second: 1e-12 is out of range"},
		{[]string{"--max-commits-per-second", "NaN"}, "--max-commits-per-second: NaN is out of range"},
		{[]string{"--max-commits-per-second", "+Inf"}, "--max-commits-per-second: +Inf is out of range"},
		{[]string{"--metrics-addr", "9464"}, "--metrics-addr"},
		{[]string{"--group-regex", "("}, "--group-regex"},
		{[]string{"--on-conflict", "zk"}, "--on-conflict=zk would move Kafka backwards"},
		{[]string{"--on-conflict", "newest"}, `unknown on-conflict policy "newest"`},
		{[]string{"--out-of-range", "nearest"}, `unknown out-of-range policy "nearest"`},
		{[]string{"--offset-adjust", "1", "--reverse"}, "--offset-adjust +1 with --reverse"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			d := defaultDeps(&out, &errb)
			d.stores = unopenable{t}
			root := newRootCmd(d, &globalOptions{})
			root.SetArgs(append([]string{"migrate", "dual-commit", "--zk", "z:1", "--kafka", "k:1"}, tc.args...))
			err := root.ExecuteContext(context.Background())
			if exitCode(err) != ExitError || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v (exit %d), want exit 1 mentioning %q", err, exitCode(err), tc.want)
			}
		})
	}
}

// syncWriter is a bytes.Buffer safe for the logger and the test to share.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestDualCommitRunsUntilStopped drives the command over fakes: with --execute the ZooKeeper
// offsets reach Kafka; without, nothing is written and the log says what would be; a stop
// (the signal's cancelled context) is exit 0.
func TestDualCommitRunsUntilStopped(t *testing.T) {
	for _, mode := range []string{"--execute", "", "--dry-run"} {
		execute := mode == "--execute"
		t.Run(map[string]string{"--execute": "execute", "": "dry run", "--dry-run": "explicit dry run"}[mode], func(t *testing.T) {
			stores := fixture()
			var out bytes.Buffer
			errb := &syncWriter{}
			d := defaultDeps(&out, errb)
			d.stores = stores
			root := newRootCmd(d, &globalOptions{})
			args := []string{"migrate", "dual-commit", "--zk", "z:1", "--kafka", "k:1", "--group", "g2", "--poll-interval", "10ms"}
			if mode != "" {
				args = append(args, mode)
			}
			root.SetArgs(args)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- root.ExecuteContext(ctx) }()
			want := "mirrored"
			if !execute {
				want = "would mirror (dry run)"
			}
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(errb.String(), want) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // polling the log; a hang guard, not a timing assertion
			}
			cancel()
			if err := <-done; exitCode(err) != ExitOK {
				t.Fatalf("stopped: err %v, want exit 0\n%s", err, errb.String())
			}
			if !strings.Contains(errb.String(), want) {
				t.Fatalf("log lacks %q:\n%s", want, errb.String())
			}
			commits := stores.kafka.Commits()
			if execute && (len(commits) != 1 || commits[0].Group != "g2" || commits[0].Offset != 5) {
				t.Errorf("commits %+v, want g2 t/0 at 5", commits)
			}
			if !execute && len(commits) != 0 {
				t.Errorf("dry run committed %+v", commits)
			}
		})
	}
}

// scrape returns what the observer's /metrics serves.
func scrape(t *testing.T, o *dualObserver) string {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(o.m.reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close() //nolint:errcheck // read already
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func testObserver(t *testing.T, execute bool) (*dualObserver, *bytes.Buffer) {
	t.Helper()
	var errb bytes.Buffer
	o := newDualObserver(defaultDeps(io.Discard, &errb), execute, "every group under /consumers", time.Minute,
		func() int64 { return 2 })
	o.log = slog.New(slog.NewTextHandler(&errb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return o, &errb
}

// TestDualCommitMetrics: the series an operator alerts on are there, per group; the lag is the
// one measured after the writes; a group that leaves takes its series along.
func TestDualCommitMetrics(t *testing.T) {
	o, _ := testObserver(t, true)
	k := int64(3)
	mtime := o.m.started.Add(time.Second)
	o.SelectionChanged(mirror.Selection{Groups: []string{"g", "h"}, Added: []string{"g", "h"}})
	o.GroupSynced(mirror.GroupStatus{Group: "g", Phase: mirror.PhaseSwitching, Lag: 7,
		Writes: []mirror.Write{
			{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 0}, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror,
				From: &k, To: 10, Mtime: mtime, Acked: mtime.Add(30 * time.Millisecond)},
			{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 1}, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror, To: 4, Refused: true},
			// Set before the start: not a latency of the mirror.
			{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 2}, Direction: mirror.ToKafka, Reason: mirror.ReasonMirror,
				To: 4, Mtime: o.m.started.Add(-time.Hour), Acked: mtime},
		}})
	o.GroupSynced(mirror.GroupStatus{Group: "h", Phase: mirror.PhaseZKPrimary, DryRun: true,
		Writes: []mirror.Write{{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 0}, Direction: mirror.ToKafka,
			Reason: mirror.ReasonMirror, To: 1}}})
	resync := time.Unix(1700000000, 0)
	o.LoopState(mirror.LoopState{Beat: time.Now(), Synced: true, Armed: true, LastResync: resync})
	body := scrape(t, o)
	for _, want := range []string{
		`zk2kafka_dual_commit_groups 2`,
		`zk2kafka_dual_commit_phase{group="g",phase="switching"} 1`,
		`zk2kafka_dual_commit_phase{group="g",phase="zk-primary"} 0`,
		`zk2kafka_dual_commit_lag_offsets{group="g"} 7`,
		`zk2kafka_dual_commit_writes_total{direction="zk-to-kafka",dry_run="false",group="g",reason="mirror"} 2`,
		`zk2kafka_dual_commit_writes_total{direction="zk-to-kafka",dry_run="true",group="h",reason="mirror"} 1`,
		`zk2kafka_dual_commit_refused_total{group="g"} 1`,
		`zk2kafka_dual_commit_mirror_latency_seconds_count 1`,
		`zk2kafka_dual_commit_mirror_latency_seconds_bucket{le="0.05"} 1`,
		`zk2kafka_dual_commit_mirror_latency_seconds_bucket{le="0.025"} 0`,
		`zk2kafka_dual_commit_last_resync_timestamp_seconds 1.7e+09`,
		`zk2kafka_dual_commit_zk_session_expiries_total 2`,
		`zk2kafka_dual_commit_ready 1`,
		`zk2kafka_dual_commit_lease_held 0`,
		`zk2kafka_build_info{goversion="go`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	o.GroupSynced(mirror.GroupStatus{Group: "h", Phase: mirror.PhaseZKPrimary,
		Blocked: map[migrate.Class]int{migrate.ClassAboveLogEnd: 2}})
	if body := scrape(t, o); !strings.Contains(body, `zk2kafka_dual_commit_blocked_partitions{class="above-log-end",group="h"} 2`) {
		t.Errorf("blocked partitions not counted:\n%s", body)
	}
	o.GroupSynced(mirror.GroupStatus{Group: "h", Phase: mirror.PhaseZKPrimary,
		Rewinds: []mirror.Rewind{{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 0}, From: 50, To: 0}}})
	if body := scrape(t, o); !strings.Contains(body, `zk2kafka_dual_commit_legacy_rewinds_total{group="h"} 1`) {
		t.Errorf("a rewind is not counted:\n%s", body)
	}
	o.GroupSynced(mirror.GroupStatus{Group: "h", Phase: mirror.PhaseZKPrimary})
	if body := scrape(t, o); !strings.Contains(body, `zk2kafka_dual_commit_blocked_partitions{class="above-log-end",group="h"} 0`) {
		t.Errorf("a class no longer blocked keeps its count:\n%s", body)
	}
	o.SelectionChanged(mirror.Selection{Groups: []string{"h"}, Removed: []string{"g"}})
	body = scrape(t, o)
	if strings.Contains(body, `group="g"`) || !strings.Contains(body, "zk2kafka_dual_commit_groups 1") {
		t.Errorf("series of the group that left are still served, or the gauge is stale:\n%s", body)
	}
}

// TestDualCommitPromtool: a scrape passes promtool's own lint (Debian's prometheus package; CI
// installs it, so there it must run).
func TestDualCommitPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed: .ci/run installs Debian's prometheus package")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	o, _ := testObserver(t, true)
	o.SelectionChanged(mirror.Selection{Groups: []string{"g"}, Added: []string{"g"}})
	o.GroupSynced(mirror.GroupStatus{Group: "g", Phase: mirror.PhaseZKPrimary, Lag: 1,
		Writes: []mirror.Write{{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 0}, Direction: mirror.ToKafka,
			Reason: mirror.ReasonMirror, To: 1, Err: errors.New("boom")}}})
	o.SyncFailed([]string{"g"}, errors.New("boom"))
	o.LoopState(mirror.LoopState{Beat: time.Now(), Synced: true, Armed: true, LastResync: time.Now()})
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape(t, o))
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestDualCommitProbes: /healthz follows the loop's heartbeat, not the stores; /readyz wants
// the first sync, every watch and the lease.
func TestDualCommitProbes(t *testing.T) {
	now := time.Now()
	held := func(h bool) func() (bool, string) {
		return func() (bool, string) { return h, "host-a pid 42 since 10:00" }
	}
	for _, tc := range []struct {
		name        string
		state       *mirror.LoopState // nil: nothing reported yet
		lease       func() (bool, string)
		storeFailed bool
		live        bool
		readyWhy    string // "" for ready
	}{
		{name: "at start", live: true, readyWhy: "first sync"},
		{name: "synced and armed, no lease (dry run)", state: &mirror.LoopState{Beat: now, Synced: true, Armed: true}, live: true},
		{name: "a store failing does not kill the pod", state: &mirror.LoopState{Beat: now, Synced: true, Armed: true}, storeFailed: true, live: true},
		{name: "first sync not done", state: &mirror.LoopState{Beat: now, Armed: true}, live: true, readyWhy: "first sync"},
		{name: "watches being set again", state: &mirror.LoopState{Beat: now, Synced: true}, live: true, readyWhy: "watches"},
		{name: "standby", state: &mirror.LoopState{Beat: now, Synced: true, Armed: true}, lease: held(false), live: true, readyWhy: "host-a pid 42"},
		{name: "lease held", state: &mirror.LoopState{Beat: now, Synced: true, Armed: true}, lease: held(true), live: true},
		{name: "loop stuck", state: &mirror.LoopState{Beat: now.Add(-2 * time.Minute), Synced: true, Armed: true}, live: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := testObserver(t, true)
			o.lease = tc.lease
			if tc.state != nil {
				o.LoopState(*tc.state)
			}
			if tc.storeFailed {
				o.SyncFailed([]string{"g"}, context.DeadlineExceeded)
			}
			if err := o.liveness(); (err == nil) != tc.live {
				t.Errorf("liveness: %v, want live %v", err, tc.live)
			}
			err := o.readiness()
			switch {
			case tc.readyWhy == "" && err != nil:
				t.Errorf("readiness: %v, want ready", err)
			case tc.readyWhy != "" && (err == nil || !strings.Contains(err.Error(), tc.readyWhy)):
				t.Errorf("readiness: %v, want not ready for %q", err, tc.readyWhy)
			}
		})
	}
}

// TestDualCommitSelectionLog: the selection is logged, and a selection that matches nothing is
// a warning naming what is waited for and where.
func TestDualCommitSelectionLog(t *testing.T) {
	o, errb := testObserver(t, true)
	o.SelectionChanged(mirror.Selection{Missing: []string{"orders"}})
	o.SelectionChanged(mirror.Selection{Groups: []string{"orders"}, Added: []string{"orders"}})
	for _, want := range []string{
		`level=WARN msg="groups named by --group are not in ZooKeeper yet: waiting for them" groups=[orders]`,
		`level=WARN msg="waiting for a group matching the selection" under="every group under /consumers"`,
		`level=INFO msg=selection groups=1 added=1 removed=0`,
		`level=DEBUG msg="groups added to the selection" groups=[orders]`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, errb.String())
		}
	}
}

// TestDualCommitPolicyFlags: the policy flags reach the mirror: a ZooKeeper offset above the
// log end (100) is written clamped under --out-of-range=clamp, adjusted by --offset-adjust
// below it, and the start line reports the policy.
func TestDualCommitPolicyFlags(t *testing.T) {
	stores := fixture()
	stores.legacy.SetOffset("g2", "t", 0, 500)
	stores.legacy.SetOffset("g2", "t", 1, 40)
	errb := &syncWriter{}
	d := defaultDeps(io.Discard, errb)
	d.stores = stores
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs([]string{"migrate", "dual-commit", "--zk", "z:1", "--kafka", "k:1", "--group", "g2", "--poll-interval", "10ms",
		"--execute", "--out-of-range", "clamp", "--offset-adjust", "1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(stores.kafka.Commits()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling the fake; a hang guard, not a timing assertion
	}
	cancel()
	if err := <-done; exitCode(err) != ExitOK {
		t.Fatalf("stopped: err %v, want exit 0\n%s", err, errb.String())
	}
	got := map[string]int64{}
	for _, c := range stores.kafka.Commits() {
		got[c.TopicPartition.String()] = c.Offset
	}
	if want := map[string]int64{"t/0": 100, "t/1": 41}; !maps.Equal(got, want) {
		t.Errorf("commits %v, want %v", got, want)
	}
	if !strings.Contains(errb.String(), "on_conflict=max out_of_range=clamp offset_adjust=1") {
		t.Errorf("the start line does not report the policy:\n%s", errb.String())
	}
}
