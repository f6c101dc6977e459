package mirror_test

import (
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// Into a MirrorMaker 2 target under --topic-regex (which names the source's topics), the
// target's commits of the selected topics are still compared: a commit ahead of the translated
// ZooKeeper offset is never lowered, and the one behind is moved forward.
func TestMirrorIntoTargetUnderTopicFilter(t *testing.T) {
	f := newFixture()
	tr := migratetest.Translator{Prefix: "src.", Start: map[migrate.TopicPartition]int64{{Topic: "t", Partition: 0}: 100, {Topic: "t", Partition: 1}: 100}}
	f.kafka.AddTopic("src.t", migrate.PartitionRange{LogEnd: 1000}, migrate.PartitionRange{LogEnd: 1000})
	f.legacy.SetOffset("g", "t", 0, 150) // 50 in the target
	f.legacy.SetOffset("g", "t", 1, 150)
	f.legacy.SetLive("g", "ids/c-1") // the legacy consumer runs on: the group is switching
	f.kafka.SetGroup("g", "Empty", 0)
	f.kafka.SetCommitted("g", "src.t", 0, 70) // ahead of the translation
	f.kafka.SetCommitted("g", "src.t", 1, 30) // behind it
	flt, err := migrate.NewFilter(nil, "", "^t$", "")
	if err != nil {
		t.Fatal(err)
	}
	f.m.Legacy, f.m.Filter, f.m.Translator, f.m.LegacyWriter = migrate.Translated(f.legacy, tr), flt, tr, nil
	f.start(t)
	f.obs.next(t, "g")
	got := kafkaOffsets(t, f.kafka, "g")
	if got["src.t/0"] != 70 || got["src.t/1"] != 50 {
		t.Errorf("the target's commits %v, want src.t/0 kept at 70 and src.t/1 moved to 50", got)
	}
}
