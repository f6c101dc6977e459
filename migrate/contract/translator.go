package contract

import (
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TranslatorGroup is the group TestTranslator translates for (a translator that places a group's offsets from records of its own is tested with records of it).
const TranslatorGroup = "contract-group"

// TestTranslator checks the clauses of migrate.Translator on tr, over the source offsets
// 0..upTo of each partition in parts (a partition the translator knows nothing of too): the
// topic names go back and forth; a placed offset is a non-negative target with a
// non-negative re-read bound, a blocked one has a blocked class and a reason; and placed
// offsets never go backwards as the source offset grows (a larger source offset placed
// before a smaller one's target would make a consumer moved forward read less than one moved
// back, which is a skip for one of them).
func TestTranslator(t *testing.T, tr migrate.Translator, parts []migrate.TopicPartition, upTo int64) {
	t.Run("topic names go back and forth", func(t *testing.T) {
		for _, tp := range parts {
			target := tr.Topic(tp.Topic)
			if got, ok := tr.Source(target); !ok || got != tp.Topic {
				t.Errorf("Source(Topic(%q) = %q) = %q, %v; want %q, true", tp.Topic, target, got, ok, tp.Topic)
			}
		}
	})
	t.Run("a placement is an offset or a blocked class with its reason", func(t *testing.T) {
		blocked := []migrate.Class{migrate.ClassNoSync, migrate.ClassBelowFirstSync, migrate.ClassReplicationBehind}
		for _, tp := range parts {
			for off := int64(0); off <= upTo; off++ {
				p := tr.Translate(TranslatorGroup, tp, off)
				switch {
				case p.Blocked == "" && (p.Offset < 0 || p.MaxReread < 0):
					t.Fatalf("Translate(%s, %d) = %+v: a negative offset or re-read bound", tp, off, p)
				case p.Blocked != "" && (!slices.Contains(blocked, p.Blocked) || p.Reason == ""):
					t.Fatalf("Translate(%s, %d) = %+v: want one of %v with a reason", tp, off, p, blocked)
				}
			}
		}
	})
	t.Run("placed offsets never go backwards", func(t *testing.T) {
		for _, tp := range parts {
			last, lastOff := int64(-1), int64(-1)
			for off := int64(0); off <= upTo; off++ {
				p := tr.Translate(TranslatorGroup, tp, off)
				if p.Blocked != "" {
					continue
				}
				if p.Offset < last {
					t.Fatalf("%s: source %d placed at %d, below source %d's %d", tp, off, p.Offset, lastOff, last)
				}
				last, lastOff = p.Offset, off
			}
		}
	})
}
