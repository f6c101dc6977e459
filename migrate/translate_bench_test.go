package migrate_test

import (
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// BenchmarkPlanTranslated100k is the core's share of the MirrorMaker 2 translation: the
// streamed plan of benchInputs' 100k offsets over the in-memory stores, plain and read through
// migrate.Translated (a translator that places every offset, identity names), so that the
// difference is the wrapper, the sources and their fingerprint, without any I/O.
func BenchmarkPlanTranslated100k(b *testing.B) {
	in := benchInputs(1000, 100)
	legacy := migratetest.NewLegacyStore(in.Legacy...)
	kafka := migratetest.NewKafkaStore()
	tr := migratetest.Translator{Start: map[migrate.TopicPartition]int64{}}
	for t, ti := range in.Topics {
		r := make([]migrate.PartitionRange, len(ti.Partitions))
		for p, pr := range ti.Partitions {
			r[p] = pr
			tr.Start[migrate.TopicPartition{Topic: t, Partition: p}] = 0
		}
		kafka.AddTopic(t, r...)
	}
	for g, gs := range in.Groups {
		for tp, off := range gs.Committed {
			kafka.SetCommitted(g, tp.Topic, tp.Partition, off)
		}
	}
	f, err := migrate.NewFilter(nil, "", "", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		legacy migrate.LegacyStore
	}{{"plain", legacy}, {"translated", migrate.Translated(legacy, tr)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pl := &migrate.Planner{Legacy: c.legacy, Kafka: kafka, Filter: f, Policy: migrate.DefaultPolicy()}
				tail, err := pl.Stream(b.Context(), migratetest.Now, &collectSink{})
				if err != nil {
					b.Fatal(err)
				}
				if tail.Summary.Partitions != 100000 {
					b.Fatalf("%d partitions planned", tail.Summary.Partitions)
				}
			}
		})
	}
}
