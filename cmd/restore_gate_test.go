package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// afterFirstRead is the Kafka fake with a hook run once, right after the first Groups read
// returns: the world changes between the restore's plan (its first read of the groups) and
// its commits.
type afterFirstRead struct {
	*migratetest.KafkaStore
	once sync.Once
	hook func()
}

func (k *afterFirstRead) Groups(ctx context.Context, groups []string) (map[string]migrate.GroupState, error) {
	out, err := k.KafkaStore.Groups(ctx, groups)
	k.once.Do(k.hook)
	return out, err
}

type hookedStores struct {
	writableStores
	kafka *afterFirstRead
}

func (s hookedStores) OpenKafka(context.Context, *globalOptions, *deps) (migrate.KafkaStore, func(), error) {
	return s.kafka, func() {}, nil
}

// TestRestoreRechecksGatesBeforeCommit: a legacy consumer that registers, or a Kafka group
// that becomes active, after the restore planned but before it commits, blocks the write, as
// it does for copy: the gates are read again just before each batch is committed. Nothing is
// committed, the partition is reported blocked (exit 2), never failed or written.
func TestRestoreRechecksGatesBeforeCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(writableStores)
		reason string
	}{
		{"legacy consumer registers", func(s writableStores) { s.legacy.SetLive("g1", "ids/late-consumer") }, "legacy"},
		{"kafka group becomes active", func(s writableStores) { s.kafka.SetGroup("g1", "Stable", 1) }, "Stable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := writableFixture()
			hs := hookedStores{writableStores: s, kafka: &afterFirstRead{KafkaStore: s.kafka, hook: func() { tc.change(s) }}}
			csv := writeFile(t, "r.csv", "g1,t,0,15\n")
			out, errOut, code := runWith(t, hs, nil, "restore", "-o", "json", "--to", "kafka", "--file", csv,
				"--execute", "--backup", filepath.Join(t.TempDir(), "b.jsonl"))
			if n := len(s.kafka.Commits()); n != 0 {
				t.Errorf("%d partition(s) committed after the gate closed, want none", n)
			}
			if code != ExitUnsafe || !strings.Contains(out, `"status": "blocked"`) || !strings.Contains(out, tc.reason) {
				t.Fatalf("exit %d, want %d with the partition blocked (%q)\nstdout:\n%s\nstderr:\n%s", code, ExitUnsafe, tc.reason, out, errOut)
			}
		})
	}
}
