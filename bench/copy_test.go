package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zk2kafka/zk2kafka/kafkawriter"
	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/copier"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/zkreader"
)

// BenchmarkCopy measures `migrate copy --execute` (copier.Copier over the real adapters, CLI
// defaults: 128 groups per batch, 16 in parallel, backup file, re-check and read-back; "copy" with
// the default full re-check, "copy-gates" with --recheck=gates) against a naive writer that
// sends one OffsetCommit per partition.
//
// Every copy iteration really writes all n partitions: before it, with the timer stopped, the
// benchmark deletes its own groups from Kafka (DeleteGroups), plans afresh and checks that the
// plan is n zk-only writes. The time is Copier.Run alone: the plan is read once more than the
// CLI does, outside the timer, because the CLI's own plan is measured by BenchmarkPlan.
func BenchmarkCopy(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(sizeName(n), func(b *testing.B) { benchCopy(b, n) })
	}
}

func benchCopy(b *testing.B, n int) {
	f := newFixture(b, n)
	ctx := context.Background()
	sc, err := newSarama(f.stack.Kafka)
	if err != nil {
		b.Fatal(err)
	}
	groups := make([]string, f.spec.Groups)
	for i := range groups {
		groups[i] = f.spec.GroupName(i)
	}
	b.Cleanup(func() {
		if err := deleteGroups(sc, groups); err != nil {
			b.Errorf("delete the benchmark's groups: %v", err)
		}
		if err := sc.Close(); err != nil {
			b.Errorf("close kafka client: %v", err)
		}
	})
	legacy, kafka := openAdapters(b, f)
	metadata := func(_ string, e migrate.Entry) string {
		return migrate.Provenance{Version: "bench", Mtime: e.Mtime}.String()
	}
	var naiveRate float64

	b.Run("naive", func(b *testing.B) {
		plan := readPlan(b, ctx, legacy, kafka)
		checkAllWrites(b, plan, n)
		writes := naiveWrites(plan, metadata, envLimit(b, EnvNaiveMax, defaultNaiveMax))
		if len(writes) < n {
			b.Logf("naive writer measured on the first %d of %d partitions (%s): one request each", len(writes), n, EnvNaiveMax)
		}
		plan = migrate.Plan{}
		runtime.GC() // the plan's garbage must not be collected on the naive writer's time
		for b.Loop() {
			if err := naiveCommit(sc, writes); err != nil {
				b.Fatal(err)
			}
		}
		naiveRate = rate(b, len(writes))
	})

	copyRate := benchCopyRun(b, "copy", n, false, sc, groups, legacy, kafka, metadata)
	gatesRate := benchCopyRun(b, "copy-gates", n, true, sc, groups, legacy, kafka, metadata)

	if naiveRate > 0 && copyRate > 0 && gatesRate > 0 {
		b.Logf("RATIOS copy offsets=%d: copy/naive speed %.1fx (target >= 20), --recheck=gates %.1fx; copy %.0f, gates %.0f, naive %.0f offsets/s",
			n, copyRate/naiveRate, gatesRate/naiveRate, copyRate, gatesRate, naiveRate)
	}
}

// naiveWrites takes the first max writes of the plan, with the metadata copy would send.
func naiveWrites(plan migrate.Plan, metadata func(string, migrate.Entry) string, max int) []naiveWrite {
	var out []naiveWrite
	for _, gw := range plan.Writes() {
		for _, e := range gw.Entries {
			if len(out) == max {
				return out
			}
			out = append(out, naiveWrite{group: gw.Group, topic: e.Topic, partition: e.Partition, offset: e.Target, metadata: metadata(gw.Group, e)})
		}
	}
	return out
}

// benchCopyRun is one copy sub-benchmark: Copier.Run with the CLI's defaults (128 groups per
// batch, 16 in parallel), the full re-check or --recheck=gates.
func benchCopyRun(b *testing.B, name string, n int, gatesOnly bool, sc sarama.Client, groups []string,
	legacy *zkreader.Reader, kafka *kafkawriter.Client, metadata func(string, migrate.Entry) string) float64 {
	ctx := context.Background()
	var copyRate float64
	b.Run(name, func(b *testing.B) {
		dir := b.TempDir()
		iter := 0
		stop := profileLoop(b, n, name)
		for b.Loop() {
			b.StopTimer()
			if err := deleteGroups(sc, groups); err != nil {
				b.Fatal(err)
			}
			plan := readPlan(b, ctx, legacy, kafka)
			checkAllWrites(b, plan, n)
			iter++
			backup, err := copier.CreateBackup(filepath.Join(dir, fmt.Sprintf("backup-%d.jsonl", iter)), plan.Fingerprint, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			executor := &copier.Copier{Legacy: legacy, Kafka: kafka, Committer: kafka, Backup: backup,
				Metadata: metadata, BatchGroups: 128, Parallel: copier.DefaultParallel, GatesOnly: gatesOnly}
			runtime.GC() // start each copy from a clean heap, as the CLI does
			b.StartTimer()

			res, err := migratetest.RunCopier(ctx, executor, plan, true)

			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if err := backup.Close(); err != nil {
				b.Fatal(err)
			}
			if c := res.Counts(); c[copier.StatusWritten] != n {
				b.Fatalf("copy: %v, want %d written and read back", c, n)
			}
			b.StartTimer()
		}
		stop()
		copyRate = rate(b, n)
	})

	return copyRate
}
