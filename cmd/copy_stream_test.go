package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
)

// chunkedFixture has n groups g000.. with one zk-only partition each, topic t.
func chunkedFixture(n int) fakeStores {
	l := migratetest.NewLegacyStore()
	for i := range n {
		l.SetOffset(fmt.Sprintf("g%03d", i), "t", 0, int64(10+i))
	}
	k := migratetest.NewKafkaStore()
	k.AddTopic("t", migrate.PartitionRange{LogEnd: 1000})
	return fakeStores{legacy: l, kafka: k}
}

// TestCopyDriftInALateChunkWritesNothing: with a plan read and planned 3 groups at a time,
// a change in the last group's ZooKeeper offset refuses the copy before its first write.
func TestCopyDriftInALateChunkWritesNothing(t *testing.T) {
	f := chunkedFixture(10)
	dir := t.TempDir()
	planFile := savePlan(t, f, dir)
	f.legacy.SetOffset("g009", "t", 0, 99)
	_, errOut, code := run(t, f, "migrate", "copy", "--plan", planFile, "--execute", "--chunk-groups", "3", "--batch-groups", "1",
		"--backup", filepath.Join(dir, "b.jsonl"))
	if code != ExitUnsafe || !strings.Contains(errOut, `group "g009" t/0: ZooKeeper offset 99, planned 19`) {
		t.Fatalf("exit %d, want %d naming the drift of g009: %s", code, ExitUnsafe, errOut)
	}
	if n := len(f.kafka.Commits()); n != 0 {
		t.Fatalf("%d commits, want none: drift refuses before the first write", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.jsonl")); !os.IsNotExist(err) {
		t.Errorf("backup file created before the drift check: %v", err)
	}
}

// TestCopyAcrossChunkBoundaries: plan and copy (saved and fresh) write every group whatever
// the chunk and batch sizes, for group counts around the chunk size.
func TestCopyAcrossChunkBoundaries(t *testing.T) {
	const chunk = 4
	for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 3*chunk + 1} {
		for _, saved := range []bool{true, false} {
			t.Run(fmt.Sprintf("groups=%d/saved=%v", n, saved), func(t *testing.T) {
				f := chunkedFixture(n)
				dir := t.TempDir()
				args := []string{"migrate", "copy", "--execute", "--chunk-groups", fmt.Sprint(chunk), "--batch-groups", "3",
					"--backup", filepath.Join(dir, "b.jsonl"), "-o", "json"}
				var empty []string
				if n == 0 {
					empty = []string{"--allow-empty"}
					args = append(args, empty...)
				}
				if saved {
					planFile := savePlan(t, f, dir, empty...)
					args = append(args, "--plan", planFile)
				}
				out, errOut, code := run(t, f, args...)
				if code != ExitOK {
					t.Fatalf("copy exit %d: %s\n%s", code, errOut, out)
				}
				st, err := f.kafka.Groups(context.Background(), groupNamesOf(n))
				if err != nil {
					t.Fatal(err)
				}
				for i, g := range groupNamesOf(n) {
					if got := st[g].Committed[migrate.TopicPartition{Topic: "t"}]; got != int64(10+i) {
						t.Errorf("group %s: Kafka %d, want %d", g, got, 10+i)
					}
				}
				if want := fmt.Sprintf(`"written": %d`, n); n > 0 && !strings.Contains(out, want) {
					t.Errorf("output lacks %s:\n%s", want, out)
				}
			})
		}
	}
}

func groupNamesOf(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("g%03d", i))
	}
	return out
}

// TestPlanOutputDoesNotDependOnChunks: the JSON and CSV of a plan streamed 2 groups at a time
// are those of one chunk, and the saved file too (created_at aside).
func TestPlanOutputDoesNotDependOnChunks(t *testing.T) {
	f := chunkedFixture(5)
	f.legacy.SetLive("g001", "c1")
	stamp := func(s string) string { // created_at is the wall clock of each run
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, `"created_at"`) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	dir := t.TempDir()
	for _, format := range []string{"json", "csv"} {
		one, _, code1 := run(t, f, "migrate", "plan", "-o", format, "--out", filepath.Join(dir, "one.json"))
		many, _, code2 := run(t, f, "migrate", "plan", "-o", format, "--chunk-groups", "2", "--out", filepath.Join(dir, "many.json"))
		if code1 != ExitUnsafe || code2 != ExitUnsafe || stamp(one) != stamp(many) || !strings.Contains(one, "g004") {
			t.Errorf("%s: exits %d, %d; one chunk:\n%s\nchunks of 2:\n%s", format, code1, code2, one, many)
		}
		a, err1 := os.ReadFile(filepath.Join(dir, "one.json"))
		b, err2 := os.ReadFile(filepath.Join(dir, "many.json"))
		if err1 != nil || err2 != nil || stamp(string(a)) != stamp(string(b)) {
			t.Errorf("saved plans differ (%v, %v):\n%s\n%s", err1, err2, a, b)
		}
	}
}
