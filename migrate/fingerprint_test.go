package migrate_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

func fpInputs() migrate.Inputs {
	bad := off("g1", "t", 9, 0)
	bad.Invalid = "sentinel -1"
	return migrate.Inputs{
		Filter: migrate.FilterSpec{Groups: []string{"g1", "g2"}, TopicRegex: "^t"},
		Legacy: []migrate.LegacyGroup{
			{Group: "g1", LiveConsumers: []string{"c1", "c2"}, Offsets: []migrate.LegacyOffset{off("g1", "t", 0, 5), off("g1", "t", 1, 6), bad}},
			{Group: "g2", Offsets: []migrate.LegacyOffset{off("g2", "t", 0, 7), off("g2", "gone", 0, 1)}},
		},
		Topics: map[string]migrate.TopicInfo{"t": topic(migrate.PartitionRange{0, 10}, migrate.PartitionRange{0, 10}, migrate.PartitionRange{3, 30}),
			"gone": {}},
		Groups: map[string]migrate.GroupState{
			"g1": {State: "Empty", Committed: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 4}},
			"g2": {State: "Stable", Members: 2},
		},
		Retention: time.Hour,
	}
}

func shuffled(in migrate.Inputs, r *rand.Rand) migrate.Inputs {
	sh := func(n int, swap func(i, j int)) { r.Shuffle(n, swap) }
	in.Legacy = slices.Clone(in.Legacy)
	sh(len(in.Legacy), func(i, j int) { in.Legacy[i], in.Legacy[j] = in.Legacy[j], in.Legacy[i] })
	for i := range in.Legacy {
		g := &in.Legacy[i]
		g.Offsets, g.LiveConsumers = slices.Clone(g.Offsets), slices.Clone(g.LiveConsumers)
		sh(len(g.Offsets), func(i, j int) { g.Offsets[i], g.Offsets[j] = g.Offsets[j], g.Offsets[i] })
		sh(len(g.LiveConsumers), func(i, j int) { g.LiveConsumers[i], g.LiveConsumers[j] = g.LiveConsumers[j], g.LiveConsumers[i] })
	}
	in.Filter.Groups = slices.Clone(in.Filter.Groups)
	sh(len(in.Filter.Groups), func(i, j int) { in.Filter.Groups[i], in.Filter.Groups[j] = in.Filter.Groups[j], in.Filter.Groups[i] })
	return in
}

func TestFingerprintIgnoresOrder(t *testing.T) {
	base := migrate.Fingerprint(fpInputs())
	if len(base) != len("sha256:")+64 || base[:7] != "sha256:" {
		t.Fatalf("fingerprint %q is not sha256:<hex>", base)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		if got := migrate.Fingerprint(shuffled(fpInputs(), r)); got != base {
			t.Fatalf("shuffle %d: fingerprint %s, want %s", i, got, base)
		}
	}
}

func TestFingerprintSensitivity(t *testing.T) {
	type edit func(in *migrate.Inputs)
	tp := func(t string, p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: t, Partition: p} }
	g1 := func(in *migrate.Inputs) *migrate.LegacyGroup { return &in.Legacy[0] }
	changes := map[string]edit{
		"offset value":           func(in *migrate.Inputs) { g1(in).Offsets[0].Offset++ },
		"offset topic":           func(in *migrate.Inputs) { g1(in).Offsets[0].Topic = "u" },
		"offset partition":       func(in *migrate.Inputs) { g1(in).Offsets[0].Partition = 2 },
		"znode path":             func(in *migrate.Inputs) { g1(in).Offsets[0].Path += "x" },
		"invalid reason":         func(in *migrate.Inputs) { g1(in).Offsets[2].Invalid = "other" },
		"offset becomes invalid": func(in *migrate.Inputs) { g1(in).Offsets[0].Invalid = "bad" },
		"offset added":           func(in *migrate.Inputs) { g1(in).Offsets = append(g1(in).Offsets, off("g1", "t", 2, 5)) },
		"offset removed":         func(in *migrate.Inputs) { g1(in).Offsets = g1(in).Offsets[1:] },
		"group renamed":          func(in *migrate.Inputs) { in.Legacy[1].Group = "g3"; in.Groups["g3"] = in.Groups["g2"] },
		"group removed":          func(in *migrate.Inputs) { in.Legacy = in.Legacy[:1] },
		"live consumer added":    func(in *migrate.Inputs) { in.Legacy[1].LiveConsumers = []string{"c9"} },
		"live consumers joined":  func(in *migrate.Inputs) { g1(in).LiveConsumers = []string{"c1,c2"} },
		"kafka state":            func(in *migrate.Inputs) { in.Groups["g2"] = migrate.GroupState{State: "Empty", Members: 2} },
		"kafka members":          func(in *migrate.Inputs) { in.Groups["g2"] = migrate.GroupState{State: "Stable", Members: 3} },
		"kafka group unknown":    func(in *migrate.Inputs) { delete(in.Groups, "g2") },
		"commit value":           func(in *migrate.Inputs) { in.Groups["g1"].Committed[tp("t", 0)] = 3 },
		"commit appears":         func(in *migrate.Inputs) { in.Groups["g1"].Committed[tp("t", 1)] = 6 },
		"commit disappears":      func(in *migrate.Inputs) { delete(in.Groups["g1"].Committed, tp("t", 0)) },
		"log start":              func(in *migrate.Inputs) { in.Topics["t"].Partitions[0] = migrate.PartitionRange{1, 10} },
		"log end":                func(in *migrate.Inputs) { in.Topics["t"].Partitions[1] = migrate.PartitionRange{0, 11} },
		"topic deleted":          func(in *migrate.Inputs) { in.Topics["t"] = migrate.TopicInfo{} },
		"topic created":          func(in *migrate.Inputs) { in.Topics["gone"] = topic(migrate.PartitionRange{0, 1}) },
		"topic description gone": func(in *migrate.Inputs) { delete(in.Topics, "gone") },
		"partition deleted":      func(in *migrate.Inputs) { delete(in.Topics["t"].Partitions, 1) },
		"filter groups":          func(in *migrate.Inputs) { in.Filter.Groups = []string{"g1"} },
		"filter group regex":     func(in *migrate.Inputs) { in.Filter.GroupRegex = "g" },
		"filter topic regex":     func(in *migrate.Inputs) { in.Filter.TopicRegex = "" },
		"filter exclude regex":   func(in *migrate.Inputs) { in.Filter.ExcludeGroupRegex = "x" },
	}
	same := map[string]edit{
		"znode mtime":                     func(in *migrate.Inputs) { g1(in).Offsets[0].Mtime = migratetest.Now },
		"retention":                       func(in *migrate.Inputs) { in.Retention = 2 * time.Hour },
		"commit ZooKeeper does not have":  func(in *migrate.Inputs) { in.Groups["g1"].Committed[tp("t", 2)] = 99 },
		"range of an unplanned partition": func(in *migrate.Inputs) { in.Topics["t"].Partitions[2] = migrate.PartitionRange{0, 99} },
		"unrelated topic":                 func(in *migrate.Inputs) { in.Topics["other"] = topic() },
		"unrelated group":                 func(in *migrate.Inputs) { in.Groups["other"] = migrate.GroupState{State: "Stable"} },
		"commit at an invalid znode":      func(in *migrate.Inputs) { in.Groups["g1"].Committed[tp("t", 9)] = 1 },
		"duplicate live consumer":         func(in *migrate.Inputs) { g1(in).LiveConsumers = append(g1(in).LiveConsumers, "c1") },
	}
	base := migrate.Fingerprint(fpInputs())
	seen := map[string]string{base: "base"}
	for name, e := range changes {
		in := fpInputs()
		e(&in)
		fp := migrate.Fingerprint(in)
		if prev, dup := seen[fp]; dup {
			t.Errorf("%s: fingerprint equals that of %s", name, prev)
		}
		seen[fp] = name
	}
	for name, e := range same {
		in := fpInputs()
		e(&in)
		if fp := migrate.Fingerprint(in); fp != base {
			t.Errorf("%s changed the fingerprint, but does not decide the plan", name)
		}
	}
}
