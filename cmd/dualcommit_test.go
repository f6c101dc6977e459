package cmd

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// unopenable fails the test if a command opens a store: bad flags must stop it before.
type unopenable struct{ t *testing.T }

func (u unopenable) OpenLegacy(context.Context, *globalOptions, *deps) (migrate.LegacyStore, func(), error) {
	u.t.Error("ZooKeeper opened despite invalid flags")
	return nil, nil, context.Canceled
}

func (u unopenable) OpenKafka(context.Context, *globalOptions, *deps) (kafkaStore, func(), error) {
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
	for _, execute := range []bool{true, false} {
		t.Run(map[bool]string{true: "execute", false: "dry run"}[execute], func(t *testing.T) {
			stores := fixture()
			var out bytes.Buffer
			errb := &syncWriter{}
			d := defaultDeps(&out, errb)
			d.stores = stores
			root := newRootCmd(d, &globalOptions{})
			args := []string{"migrate", "dual-commit", "--zk", "z:1", "--kafka", "k:1", "--group", "g2", "--poll-interval", "10ms"}
			if execute {
				args = append(args, "--execute")
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

// TestDualCommitMetrics: the series an operator alerts on are there, per group, and /healthz
// follows whole-store failures.
func TestDualCommitMetrics(t *testing.T) {
	var errb bytes.Buffer
	o := newDualObserver(defaultDeps(io.Discard, &errb), true)
	o.log = slog.New(slog.NewTextHandler(&errb, nil))
	k := int64(3)
	o.GroupSynced(migrate.GroupStatus{Group: "g", Phase: migrate.PhaseSwitching, Lag: 7,
		Writes: []migrate.MirrorWrite{
			{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 0}, Direction: migrate.ToKafka, Reason: migrate.ReasonMirror, From: &k, To: 10},
			{TopicPartition: migrate.TopicPartition{Topic: "t", Partition: 1}, Direction: migrate.ToKafka, Reason: migrate.ReasonMirror, To: 4, Refused: true},
		}})
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
	for _, want := range []string{
		`zk2kafka_dual_commit_phase{group="g",phase="switching"} 1`,
		`zk2kafka_dual_commit_phase{group="g",phase="zk-primary"} 0`,
		`zk2kafka_dual_commit_lag_offsets{group="g"} 7`,
		`zk2kafka_dual_commit_writes_total{direction="zk-to-kafka",group="g",reason="mirror"} 1`,
		`zk2kafka_dual_commit_refused_total{group="g"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if err := o.health(); err != nil {
		t.Errorf("healthy observer: %v", err)
	}
	o.SyncFailed([]string{"g"}, context.DeadlineExceeded)
	if o.health() == nil {
		t.Error("healthz stays ok after a failed sync")
	}
	o.GroupSynced(migrate.GroupStatus{Group: "g", Phase: migrate.PhaseSwitching})
	if err := o.health(); err != nil {
		t.Errorf("healthz after a good sync: %v", err)
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
