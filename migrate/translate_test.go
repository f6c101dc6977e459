package migrate_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// The source topic "orders" is replicated as "src.orders": partition 0 from source offset 100
// on (target 0), partition 1 from 0 with syncs that round down (re-read bound 9) and replication
// behind past 500; partition 2 has no sync. "gone" is translated, but the target lacks
// "src.gone" (an alias that does not match).
func translator() migratetest.Translator {
	tp := func(t string, p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: t, Partition: p} }
	return migratetest.Translator{Prefix: "src.",
		Start:  map[migrate.TopicPartition]int64{tp("orders", 0): 100, tp("orders", 1): 0, tp("gone", 0): 0},
		Behind: map[migrate.TopicPartition]int64{tp("orders", 1): 500},
		Reread: map[migrate.TopicPartition]int64{tp("orders", 1): 9}}
}

func targetKafka() *migratetest.KafkaStore {
	k := migratetest.NewKafkaStore()
	k.AddTopic("src.orders", migrate.PartitionRange{LogStart: 0, LogEnd: 400}, migrate.PartitionRange{LogStart: 0, LogEnd: 600},
		migrate.PartitionRange{LogStart: 0, LogEnd: 50})
	return k
}

func TestPlanTranslated(t *testing.T) {
	cases := []struct {
		name   string
		offset migrate.LegacyOffset
		commit *int64 // the target's commit of the partition
		// want is "class action target zk", zk "-" for none; source the Source wanted.
		want   string
		source migrate.Source
		reason string
	}{
		{name: "placed exactly", offset: off("g", "orders", 0, 150), want: "zk-only write 50 50",
			source: migrate.Source{Topic: "orders", Offset: 150}, reason: "ZooKeeper 150 of source topic orders is 50 in the target (an offset sync pins it)"},
		{name: "rounded down, announced re-read", offset: off("g", "orders", 1, 300), want: "zk-only write 300 300",
			source: migrate.Source{Topic: "orders", Offset: 300, MaxReread: 9}, reason: "up to 9 records read again"},
		{name: "the target's commit ahead is kept", offset: off("g", "orders", 0, 150), commit: ptr(60), want: "kafka-ahead skip 50 50",
			source: migrate.Source{Topic: "orders", Offset: 150}, reason: "never moves an offset backwards"},
		{name: "the target's commit behind is moved forward", offset: off("g", "orders", 0, 150), commit: ptr(40), want: "zk-ahead write 50 50",
			source: migrate.Source{Topic: "orders", Offset: 150}},
		{name: "below the first sync", offset: off("g", "orders", 0, 99), want: "below-first-sync block 0 -",
			source: migrate.Source{Topic: "orders", Offset: 99}, reason: "ZooKeeper 99 of source topic \"orders\": offset 99 is below the first sync 100"},
		{name: "replication behind", offset: off("g", "orders", 1, 501), want: "replication-behind block 0 -",
			source: migrate.Source{Topic: "orders", Offset: 501}, reason: "past the replication at 500"},
		{name: "no offset sync", offset: off("g", "orders", 2, 5), want: "no-offset-sync block 0 -",
			source: migrate.Source{Topic: "orders", Offset: 5}, reason: "no offset sync"},
		{name: "the target's topic missing", offset: off("g", "gone", 0, 5), want: "topic-missing block 0 -",
			source: migrate.Source{Topic: "gone", Offset: 5}, reason: `topic "src.gone", the target's name for source topic "gone", does not exist in the target cluster`},
		{name: "an invalid znode", offset: migrate.LegacyOffset{Topic: "orders", Partition: 0, Path: znode("g", "orders", 0), Invalid: "empty znode"},
			want: "invalid-znode block 0 -", source: migrate.Source{Topic: "orders"}, reason: "empty znode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{tc.offset}})
			kafka := targetKafka()
			if tc.commit != nil {
				kafka.SetCommitted("g", "src."+tc.offset.Topic, tc.offset.Partition, *tc.commit)
			}
			plan := planVia(t, migrate.Translated(legacy, translator()), kafka, migrate.DefaultPolicy())
			e := plan.Groups[0].Entries[0]
			zk := "-"
			if e.ZK != nil {
				zk = itoa(*e.ZK)
			}
			if got := string(e.Class) + " " + string(e.Action) + " " + itoa(e.Target) + " " + zk; got != tc.want {
				t.Errorf("entry %q (%s), want %q", got, e.Reason, tc.want)
			}
			if e.Topic != "src."+tc.offset.Topic || e.Source == nil || *e.Source != tc.source {
				t.Errorf("entry topic %q source %+v, want topic %q source %+v", e.Topic, e.Source, "src."+tc.offset.Topic, tc.source)
			}
			if !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("reason %q, want one with %q", e.Reason, tc.reason)
			}
			if err := plan.Validate(); err != nil {
				t.Errorf("the plan does not validate: %v", err)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// planVia plans every group of legacy against kafka, as plan does.
func planVia(t *testing.T, legacy migrate.LegacyStore, kafka migrate.KafkaState, p migrate.Policy) migrate.Plan {
	t.Helper()
	f, err := migrate.NewFilter(nil, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	in, err := migrate.ReadInputs(context.Background(), legacy, kafka, f)
	if err != nil {
		t.Fatalf("ReadInputs: %v", err)
	}
	plan, err := migrate.Build(in, p, migratetest.Now)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	plan.Fingerprint = migrate.Fingerprint(in)
	return plan
}

// An offset adjust corrects the source's offsets; added to a translated one it would land
// between the target's records, so the plan is refused.
func TestPlanTranslatedRefusesAnOffsetAdjust(t *testing.T) {
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{off("g", "orders", 0, 150)}})
	in := translatedInputs(t, legacy, "")
	p := migrate.DefaultPolicy()
	p.OffsetAdjust = 1
	if _, err := migrate.Build(in, p, migratetest.Now); err == nil || !strings.Contains(err.Error(), "--offset-adjust +1 cannot be applied") {
		t.Fatalf("Build = %v, want the refusal of --offset-adjust", err)
	}
}

// Without a translator the store is itself: the in-place plan is unchanged.
func TestTranslatedNilIsTheStore(t *testing.T) {
	legacy := migratetest.NewLegacyStore()
	if got := migrate.Translated(legacy, nil); got != migrate.LegacyStore(legacy) {
		t.Fatalf("Translated(store, nil) = %T, want the store itself", got)
	}
}

// Copy re-checks a batch by the target's topic names: the store is asked for the source's,
// and what it reads is translated again.
func TestTranslatedRecheck(t *testing.T) {
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{off("g", "orders", 0, 150)}})
	rc, ok := migrate.Translated(legacy, translator()).(migrate.LegacyRechecker)
	if !ok {
		t.Fatal("the translated store of a LegacyRechecker is no LegacyRechecker")
	}
	legacy.SetOffset("g", "orders", 0, 170)
	got, err := rc.RecheckGroups(context.Background(), []migrate.RecheckRequest{{Group: "g",
		Offsets: []migrate.LegacyOffset{{Topic: "src.orders", Partition: 0, Path: znode("g", "orders", 0)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Offsets) != 1 {
		t.Fatalf("RecheckGroups = %+v, want one offset", got)
	}
	if o := got[0].Offsets[0]; o.Topic != "src.orders" || o.Offset != 70 || o.Source == nil || o.Source.Offset != 170 {
		t.Errorf("rechecked %+v (source %+v), want src.orders at 70 from 170", o, o.Source)
	}
	_, err = rc.RecheckGroups(context.Background(), []migrate.RecheckRequest{{Group: "g",
		Offsets: []migrate.LegacyOffset{{Topic: "orders", Partition: 0, Path: znode("g", "orders", 0)}}}})
	if err == nil || !strings.Contains(err.Error(), `topic "orders" names no source topic`) {
		t.Errorf("RecheckGroups of a topic outside the policy = %v, want a refusal", err)
	}
}

// A snapshot stays a snapshot through the translation: copy still refuses to write from it
// without --legacy-stopped.
func TestTranslatedSnapshotStillRefused(t *testing.T) {
	snap := snapshotStore{migratetest.NewLegacyStore()}
	err := migrate.CheckWriteFrom(migrate.Translated(snap, translator()), false)
	if !errors.Is(err, migrate.ErrLivenessUnseen) {
		t.Fatalf("CheckWriteFrom(translated snapshot) = %v, want ErrLivenessUnseen", err)
	}
}

type snapshotStore struct{ *migratetest.LegacyStore }

func (snapshotStore) Snapshot() string { return "a copy of the data directory" }

// --topic-regex names the znodes' topics, as ZooKeeper holds them, not the target's names.
func TestTranslatedTopicFilterNamesTheSource(t *testing.T) {
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{off("g", "orders", 0, 150), off("g", "gone", 0, 5)}})
	in := translatedInputs(t, legacy, "^orders$")
	if len(in.Legacy) != 1 || len(in.Legacy[0].Offsets) != 1 || in.Legacy[0].Offsets[0].Topic != "src.orders" {
		t.Fatalf("kept %+v, want src.orders alone", in.Legacy)
	}
}

// An offsets folder the store could not list (an invalid entry without a topic) stays without
// one through the translation: a topic filter keeps it, and it blocks its group.
func TestTranslatedUnlistableFolderStaysBlocked(t *testing.T) {
	unlistable := migrate.LegacyOffset{Path: "/consumers/g/offsets", Invalid: "not authorized to list"}
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{unlistable, off("g", "orders", 0, 150)}})
	in := translatedInputs(t, legacy, "^orders$")
	plan, err := migrate.Build(in, migrate.DefaultPolicy(), migratetest.Now)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, e := range plan.Groups[0].Entries {
		classes = append(classes, e.Topic+":"+string(e.Class))
	}
	if got := strings.Join(classes, " "); got != ":invalid-znode src.orders:zk-only" {
		t.Errorf("entries %s, want the unlistable folder without a topic, blocked, beside src.orders", got)
	}
}

// Dual-commit's reading of the offsets: a translated offset is usable at its target value, one
// the translator could not place is not (its value is the source's).
func TestUsableOffsetsTranslated(t *testing.T) {
	legacy := migratetest.NewLegacyStore(migrate.LegacyGroup{Group: "g", Offsets: []migrate.LegacyOffset{
		off("g", "orders", 0, 150), off("g", "orders", 1, 501), off("g", "orders", 2, 5)}})
	var got migrate.LegacyGroup
	if err := migrate.Translated(legacy, translator()).ReadGroups(context.Background(), []string{"g"}, func(g migrate.LegacyGroup) error {
		got = g
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	usable, unusable := migrate.UsableOffsets(got.Offsets, 0)
	tp := func(p int32) migrate.TopicPartition { return migrate.TopicPartition{Topic: "src.orders", Partition: p} }
	if o, ok := usable[tp(0)]; !ok || o.Offset != 50 || len(usable) != 1 {
		t.Errorf("usable %v, want src.orders/0 at 50 alone", usable)
	}
	if !unusable[tp(1)] || !unusable[tp(2)] {
		t.Errorf("unusable %v, want src.orders/1 (replication behind) and /2 (no sync)", unusable)
	}
}

// translatedInputs reads legacy through translator() against targetKafka(), selecting the
// znodes' topics by topicRegex ("" for all).
func translatedInputs(t *testing.T, legacy migrate.LegacyStore, topicRegex string) migrate.Inputs {
	t.Helper()
	f, err := migrate.NewFilter(nil, "", topicRegex, "")
	if err != nil {
		t.Fatal(err)
	}
	in, err := migrate.ReadInputs(context.Background(), migrate.Translated(legacy, translator()), targetKafka(), f)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
