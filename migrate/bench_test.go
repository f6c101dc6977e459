package migrate_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// benchInputs is groups×partitions offsets over one 100-partition topic per group.
func benchInputs(groups, partitions int) migrate.Inputs {
	in := migrate.Inputs{Topics: map[string]migrate.TopicInfo{}, Groups: map[string]migrate.GroupState{}}
	for g := range groups {
		name := fmt.Sprintf("group-%05d", g)
		tname := fmt.Sprintf("topic-%05d", g)
		lg := migrate.LegacyGroup{Group: name}
		ti := migrate.TopicInfo{Exists: true, Partitions: map[int32]migrate.PartitionRange{}}
		gs := migrate.GroupState{State: "Empty", Committed: map[migrate.TopicPartition]int64{}}
		for p := range int32(partitions) {
			lg.Offsets = append(lg.Offsets, off(name, tname, p, int64(1000+p)))
			ti.Partitions[p] = migrate.PartitionRange{LogStart: 0, LogEnd: 5000}
			if p%2 == 0 {
				gs.Committed[migrate.TopicPartition{Topic: tname, Partition: p}] = int64(900 + p)
			}
		}
		in.Legacy = append(in.Legacy, lg)
		in.Topics[tname] = ti
		in.Groups[name] = gs
	}
	return in
}

func BenchmarkBuild100k(b *testing.B) {
	in := benchInputs(1000, 100)
	for b.Loop() {
		if _, err := migratetest.Build(in, migrate.DefaultPolicy(), migratetest.Now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePlan100k(b *testing.B) {
	p, err := migratetest.Build(benchInputs(1000, 100), migrate.DefaultPolicy(), migratetest.Now)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := migratetest.EncodePlan(&buf, p); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := migratetest.DecodePlan(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodePlan100k writes a plan of 100k entries as a plan file is written: the head,
// then one group at a time (migrate.GroupsEncoder, what planfile.Writer uses).
func BenchmarkEncodePlan100k(b *testing.B) {
	p, err := migratetest.Build(benchInputs(1000, 100), migrate.DefaultPolicy(), migratetest.Now)
	if err != nil {
		b.Fatal(err)
	}
	head := p
	head.Groups, head.Fingerprint = []migrate.GroupPlan{}, ""
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		enc := migrate.NewGroupsEncoder(&buf, 1)
		if err := enc.Begin(head); err != nil {
			b.Fatal(err)
		}
		for _, g := range p.Groups {
			if err := enc.Element(g); err != nil {
				b.Fatal(err)
			}
		}
		tail := head
		tail.Fingerprint = p.Fingerprint
		if err := enc.End(tail); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
