package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/internal/kafkaconn"
	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/internal/stacktest"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestStoreRestarts kills and restarts the stores under a running command, on a private stack
// (restarting the shared one would break every other test): the Kafka broker during `copy`
// (SIGKILL: its page cache survives, as after a process crash) and ZooKeeper during `plan`.
// One round each by default, 3 under ZK2KAFKA_FAULTS=1.
func TestStoreRestarts(t *testing.T) {
	t.Parallel()
	st := stacktest.Private(t)
	t.Run("kafka killed during copy", func(t *testing.T) { kafkaKilledDuringCopy(t, st) })
	t.Run("zookeeper restarted during plan", func(t *testing.T) { zkRestartedDuringPlan(t, st) })
}

// kafkaKilledDuringCopy kills the broker once the copy has backed up k records, starts it again,
// and checks: the copy either rode through the outage (exit 0), stopped with an error (exit 1)
// or blocked what a just-restarted broker could not confirm (exit 2), every offset it reported written is still in Kafka after the restart (no loss), every
// offset is its prior value or the target (no regression), and a re-run completes the copy.
// Each round starts again from the state before the migration, so every round has work to do.
func kafkaKilledDuringCopy(t *testing.T, st *stacktest.Stack) {
	e := newEnvOn(t, st, kafkaconn.Security{})
	rng := faultRand(t)
	rounds := faultRounds(1, 3)
	fs := e.seedFaultSet(seed.Spec{Seed: 13, Groups: 120, TopicsPerGroup: 2, Topics: 3, Partitions: 4, Records: 50})
	prior, final := fs.priorAndFinal()
	writes := countDiff(prior, final)
	for round := range rounds {
		e.resetKafka(fs.groups, prior)
		plan := e.savePlan()
		backup := e.file(fmt.Sprintf("backup-%02d", round))
		k := rng.IntN(max(1, writes/2))
		ctx, cancel := context.WithTimeout(e.ctx(), callTimeout)
		p := e.startCLI(ctx, nil, "migrate", "copy", "--plan", plan, "--execute", "--backup", backup,
			"--batch-groups", "2", "-o", "json")
		for !p.exited() && backupLines(backup) < k+1 {
			time.Sleep(2 * time.Millisecond)
		}
		killed := !p.exited()
		if killed {
			if err := st.Restart("kafka", 0, true); err != nil {
				t.Fatal(err)
			}
		}
		r := p.wait()
		cancel()
		now := e.kafkaSnapshot(fs.groups)
		t.Logf("round %d: broker killed after %d backup records (killed while running: %v): exit %d, %d offsets left\n%s",
			round, k, killed, r.code, countDiff(now, final), lastLines(r.stderr, 3))
		// Exit 2 is fair too: a broker that has just started can answer Metadata before it knows
		// its topics, so the re-check before a batch sees them missing and blocks the batch.
		if r.code != 0 && r.code != 1 && !(r.code == 2 && strings.Contains(r.stderr, "by the re-check before writing")) {
			t.Fatalf("round %d: exit %d, want 0, 1, or 2 for writes blocked at the re-check\n%s", round, r.code, r)
		}
		e.checkReportedWrites(round, r, now)
		e.checkNeverBackwards(round, now, prior, final, []string{backup})
		e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file(fmt.Sprintf("backup-%02d-final", round)))
		if got := e.kafkaSnapshot(fs.groups); !maps.Equal(got, final) {
			t.Fatalf("round %d: after the re-run kafka differs from the expected state at %d offsets, e.g. %s",
				round, countDiff(got, final), firstDiff(got, final))
		}
	}
}

// resetKafka puts Kafka back in its state before the migration: the groups deleted (with
// their commits), then the prior commits made again. Retried while a restarted broker settles.
func (e *env) resetKafka(groups []string, prior map[migrate.Key]int64) {
	e.t.Helper()
	deadline := time.Now().Add(callTimeout)
	for _, g := range groups {
		for {
			err := e.admin.DeleteConsumerGroup(g)
			if err == nil || errors.Is(err, sarama.ErrGroupIDNotFound) {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("delete kafka group %s: %v", g, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	e.commitKeys(prior)
}

// zkRestartedDuringPlan restarts ZooKeeper (stopped for a second, by SIGTERM or SIGKILL) while
// `plan --out` runs back to back over a few thousand offsets. Every run must either fail
// (exit 1) and leave no plan file, or save exactly the plan of the unchanged stores: never a
// plan that misses what it could not read.
func zkRestartedDuringPlan(t *testing.T, st *stacktest.Stack) {
	e := newEnvOn(t, st, kafkaconn.Security{})
	rng := faultRand(t)
	rounds := faultRounds(1, 3)
	e.seedFaultSet(seed.Spec{Seed: 17, Groups: 1500, TopicsPerGroup: 1, Topics: 2, Partitions: 2, Records: 10})
	ref, err := migratetest.ReadPlanFile(e.savePlan())
	if err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		restarted := make(chan error, 1)
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		began := time.Now().Add(delay)
		go func() {
			time.Sleep(delay)
			restarted <- st.Restart("zookeeper", time.Second, round%2 == 1)
		}()
		failed, saved, overlapped := 0, 0, 0
	runs:
		for run := 0; ; run++ {
			out := e.file(fmt.Sprintf("plan-%d-%d", round, run))
			start := time.Now()
			r := e.startCLI(e.ctx(), nil, "migrate", "plan", "--out", out, "-o", "json").wait()
			t.Logf("round %d run %d: exit %d after %s\n%s", round, run, r.code, time.Since(start).Round(time.Millisecond), lastLines(r.stderr, 2))
			if time.Now().After(began) {
				overlapped++ // it ran while ZooKeeper was going down or up (or both)
			}
			switch r.code {
			case 0:
				saved++
				p, err := migratetest.ReadPlanFile(out)
				if err != nil {
					t.Fatalf("round %d run %d: exit 0 but the plan file: %v", round, run, err)
				}
				if p.Fingerprint != ref.Fingerprint || len(p.Groups) != len(ref.Groups) || !maps.Equal(p.Summary().ByClass, ref.Summary().ByClass) {
					t.Fatalf("round %d run %d: saved a plan of %d groups %v (fingerprint %s), want %d groups %v (%s)",
						round, run, len(p.Groups), p.Summary().ByClass, p.Fingerprint, len(ref.Groups), ref.Summary().ByClass, ref.Fingerprint)
				}
			case 1:
				failed++
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("round %d run %d: a failed plan left %s (%v)\n%s", round, run, out, err, r)
				}
				if !strings.Contains(strings.ToLower(r.stderr), "zookeeper") && !strings.Contains(r.stderr, "znode") {
					t.Errorf("round %d run %d: the error does not name ZooKeeper\n%s", round, run, r)
				}
			default:
				t.Fatalf("round %d run %d: exit %d, want 0 or 1\n%s", round, run, r.code, r)
			}
			select {
			case err := <-restarted:
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("round %d: %d plan runs, %d of them during the restart: %d saved the full plan, %d failed", round, run+1, overlapped, saved, failed)
				if overlapped == 0 {
					t.Errorf("round %d: no plan ran during the restart: nothing was tested", round)
				}
				break runs
			default:
			}
		}
	}
	e.waitZK()
	// After the restarts the stores are unchanged: a last plan equals the reference.
	p, err := migratetest.ReadPlanFile(e.savePlan())
	if err != nil || p.Fingerprint != ref.Fingerprint {
		t.Errorf("after the restarts: plan %v, fingerprint %s, want %s", err, p.Fingerprint, ref.Fingerprint)
	}
}

// checkReportedWrites checks that every offset a copy run reported written (its -o json
// output, printed even when the run stopped early) is in Kafka now: nothing reported is lost.
func (e *env) checkReportedWrites(round int, r result, now map[migrate.Key]int64) {
	e.t.Helper()
	if r.stdout == "" {
		return // stopped before it had a result to print
	}
	var doc copyDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		e.t.Fatalf("round %d: copy output: %v\n%s", round, err, r)
	}
	for _, g := range doc.Result.Groups {
		for _, pr := range g.Partitions {
			k := migrate.Key{Group: g.Group, Topic: pr.Topic, Partition: pr.Partition}
			if pr.Status == copier.StatusWritten && now[k] != pr.Target {
				e.t.Errorf("round %d: %s reported written (%d) but kafka holds %d", round, k, pr.Target, now[k])
			}
		}
	}
}

// priorAndFinal is the Kafka state before a migration of fs (a quarter of the partitions
// behind ZooKeeper, to be written over; a quarter ahead, to be kept by --on-conflict=max; the
// rest without a commit) and the state a complete copy must leave.
func (fs faultSet) priorAndFinal() (prior, final map[migrate.Key]int64) {
	prior, final = map[migrate.Key]int64{}, maps.Clone(fs.zk)
	for i, k := range sortedKeys(fs.zk) {
		switch off := fs.zk[k]; i % 4 {
		case 1:
			prior[k] = off / 2
		case 3:
			if off < int64(fs.res.Spec.Records) {
				prior[k] = off + 1
				final[k] = off + 1
			}
		}
	}
	return prior, final
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
