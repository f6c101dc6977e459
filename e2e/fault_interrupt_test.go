package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/internal/seed"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// TestCopyInterruptedAtRandom runs `migrate copy --plan --execute` as a real process and sends
// it SIGINT (Ctrl-C) at a random point of its writes, again and again on the same saved plan,
// then lets one run finish. After every interruption each Kafka offset must be either what it
// was before the migration or the plan's target (never anything else, never backwards), and
// every offset that changed must already be in a backup file. The final state must equal
// ZooKeeper's offsets exactly where the plan writes and keep Kafka's where Kafka was ahead.
// 3 interruptions by default, 20 under ZK2KAFKA_FAULTS=1; the seed is logged.
func TestCopyInterruptedAtRandom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rounds := faultRounds(3, 20)
	rng := faultRand(t)
	fs := e.seedFaultSet(seed.Spec{Seed: 11, Groups: 120, TopicsPerGroup: 2, Topics: 3, Partitions: 4, Records: 50})

	prior, final := fs.priorAndFinal()
	e.commitKeys(prior)
	plan := e.savePlan()
	saved, err := migratetest.ReadPlanFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	writes := saved.Summary().ByAction[migrate.ActionWrite]
	if writes < 20*rounds {
		t.Fatalf("the plan writes only %d offsets: too few for %d interruptions", writes, rounds)
	}

	var backups []string
	midCopy := 0
	for round := range rounds {
		backup := e.file(fmt.Sprintf("backup-%02d", round))
		backups = append(backups, backup)
		// Interrupt once this run's backup holds k records (k=0: as soon as it exists), then
		// after a little more jitter; k stays small so that many rounds find work left.
		k := rng.IntN(max(1, writes/(2*rounds)))
		jitter := time.Duration(rng.IntN(30)) * time.Millisecond
		ctx, cancel := context.WithTimeout(e.ctx(), callTimeout)
		p := e.startCLI(ctx, nil, "migrate", "copy", "--plan", plan, "--execute", "--backup", backup,
			"--batch-groups", "2", "-o", "json")
		sent := interruptAfter(p, backup, k+1, jitter)
		r := p.wait()
		cancel()
		recs := 0
		if n := backupLines(backup); n > 0 {
			recs = n - 1
		}
		now := e.kafkaSnapshot(fs.groups)
		left := countDiff(now, final)
		t.Logf("round %d: SIGINT after %d backup records + %s (sent %v): exit %d, %d records, %d offsets left to write",
			round, k, jitter, sent, r.code, recs, left)
		if r.code != 0 && r.code != 1 {
			t.Fatalf("round %d: exit %d, want 0 (finished first) or 1 (interrupted)\n%s", round, r.code, r)
		}
		// The stop is named: "copy stopped after N of M groups: interrupt signal received", or
		// "context canceled" from a store call the signal cut short.
		if r.code == 1 && !strings.Contains(r.stderr, "interrupt signal received") && !strings.Contains(r.stderr, "context canceled") {
			t.Errorf("round %d: exit 1 without naming the cancellation\n%s", round, r)
		}
		e.checkNeverBackwards(round, now, prior, final, backups)
		e.checkReportedWrites(round, r, now)
		if r.code == 1 && recs > 0 && left > 0 {
			midCopy++
		}
		if left == 0 {
			t.Logf("round %d: the copy is complete: no work left for further interruptions", round)
			break
		}
	}
	if midCopy*2 < rounds {
		t.Errorf("only %d of %d interruptions landed mid-copy (some written, some left): the data set is too small to test anything", midCopy, rounds)
	}

	// Re-run to completion, then once more: the second run has nothing left to write.
	r := e.mustCLI(0, "migrate", "copy", "--plan", plan, "--execute", "--backup", e.file("backup-final"), "-o", "json")
	if doc := decodeJSON[copyDoc](t, r); doc.Counts[copier.StatusFailed]+doc.Counts[copier.StatusBlocked] != 0 {
		t.Fatalf("final copy: counts %v\n%s", doc.Counts, r)
	}
	if got := e.kafkaSnapshot(fs.groups); !maps.Equal(got, final) {
		t.Fatalf("after the final copy kafka differs from the expected state at %d offsets, e.g. %s", countDiff(got, final), firstDiff(got, final))
	}
	r = e.mustCLI(0, "migrate", "copy", "--execute", "--backup", e.file("backup-again"), "-o", "json")
	if doc := decodeJSON[copyDoc](t, r); doc.Counts[copier.StatusWritten] != 0 {
		t.Errorf("a copy after convergence wrote %d offsets\n%s", doc.Counts[copier.StatusWritten], r)
	}
	// Kafka's own tool, independently, for the first and last group.
	for _, g := range []string{fs.groups[0], fs.groups[len(fs.groups)-1]} {
		w := map[string]int64{}
		for k, off := range final {
			if k.Group == g {
				w[tp(k.Topic, k.Partition).String()] = off
			}
		}
		if got := e.st.DescribeOffsets(t, g); !maps.Equal(got, w) {
			t.Errorf("consumer-groups --describe %s: %v, want %v", g, got, w)
		}
	}
}

// interruptAfter sends SIGINT to p once backup has at least lines lines (or p ended), after
// jitter. It reports whether the signal was sent before p ended on its own.
func interruptAfter(p *proc, backup string, lines int, jitter time.Duration) bool {
	for !p.exited() && backupLines(backup) < lines {
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(jitter)
	if p.exited() {
		return false
	}
	return p.cmd.Process.Signal(syscall.SIGINT) == nil
}

// checkNeverBackwards checks every offset of now against the state before the migration and
// the plan's target, and that every changed offset was backed up before it was written.
func (e *env) checkNeverBackwards(round int, now, prior, final map[migrate.Key]int64, backups []string) {
	e.t.Helper()
	backedUp := map[migrate.Key]copier.BackupRecord{}
	for _, b := range backups {
		if _, err := os.Stat(b); err != nil {
			continue // interrupted before the file was created
		}
		_, recs := readBackup(e.t, b)
		for _, r := range recs {
			backedUp[migrate.Key{Group: r.Group, Topic: r.Topic, Partition: r.Partition}] = r
		}
	}
	for k := range now {
		if _, ok := final[k]; !ok {
			e.t.Errorf("round %d: kafka holds %s=%d, which the migration never planned", round, k, now[k])
		}
	}
	for k, target := range final {
		got, has := now[k]
		before, hadBefore := prior[k]
		switch {
		case hadBefore && has && got == before:
		case !hadBefore && !has:
		case has && got == target:
			rec, ok := backedUp[k]
			if !ok || rec.Target != target || (rec.KafkaBefore == nil) != !hadBefore || (hadBefore && *rec.KafkaBefore != before) {
				e.t.Errorf("round %d: %s was written (%d) without a matching backup record (%+v, found %v)", round, k, got, rec, ok)
			}
		default:
			e.t.Errorf("round %d: %s holds %v (present %v), want the prior value %d (present %v) or the target %d",
				round, k, got, has, before, hadBefore, target)
		}
	}
}

// commitKeys commits the given offsets into Kafka, one admin commit per group.
func (e *env) commitKeys(offsets map[migrate.Key]int64) {
	e.t.Helper()
	byGroup := map[string]map[migrate.TopicPartition]int64{}
	for k, off := range offsets {
		if byGroup[k.Group] == nil {
			byGroup[k.Group] = map[migrate.TopicPartition]int64{}
		}
		byGroup[k.Group][tp(k.Topic, k.Partition)] = off
	}
	for g, m := range byGroup {
		var commits []migrate.Commit
		for tp, off := range m {
			commits = append(commits, migrate.Commit{TopicPartition: tp, Offset: off, Metadata: "before"})
		}
		res, err := e.kw.Commit(e.ctx(), g, commits)
		if err != nil {
			e.t.Fatalf("commit group %s: %v", g, err)
		}
		for _, r := range res {
			if r.Err != nil {
				e.t.Fatalf("commit %s %s: %v", g, r.TopicPartition, r.Err)
			}
		}
	}
}

func sortedKeys(m map[migrate.Key]int64) []migrate.Key {
	keys := make([]migrate.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slicesSortKeys(keys)
	return keys
}

// countDiff is how many keys differ between a and b (missing on one side counts).
func countDiff(a, b map[migrate.Key]int64) int {
	n := 0
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			n++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			n++
		}
	}
	return n
}

func firstDiff(got, want map[migrate.Key]int64) string {
	for _, k := range sortedKeys(want) {
		if g, ok := got[k]; !ok || g != want[k] {
			return fmt.Sprintf("%s: got %d (present %v), want %d", k, g, ok, want[k])
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("%s: got %d, want no commit", k, v)
		}
	}
	return "none"
}
