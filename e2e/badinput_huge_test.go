package e2e_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// TestHugeChildLists gives the real command line child lists beyond ZooKeeper's usual
// jute.maxbuffer (1 MiB): /consumers holding 4,400 groups of 240-character names (~1.1 MB of
// names in one getChildren answer) and one group whose topic has 5,000 partition znodes. plan
// must see every group and every partition (no silent truncation), block the partitions of the
// topic Kafka does not have (exit 2), and copy must write nothing.
func TestHugeChildLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const groups, partitions = 4400, 5000
	var paths []string
	prefix := strings.Repeat("g", 240-len(fmt.Sprint(groups))-1)
	for i := range groups {
		paths = append(paths, fmt.Sprintf("%s/consumers/%s-%d", e.chroot, prefix, i))
	}
	big := e.group()
	topic := "never-created-" + big
	for p := range partitions {
		paths = append(paths, fmt.Sprintf("%s/consumers/%s/offsets/%s/%d", e.chroot, big, topic, p))
	}
	e.ensure(fmt.Sprintf("%s/consumers/%s/offsets/%s", e.chroot, big, topic))
	e.createMany(paths, "7")
	t.Cleanup(func() { e.deleteMany(paths) }) // before the chroot's own serial delete

	r := e.cli("migrate", "plan", "-o", "json")
	if r.code != 2 {
		t.Fatalf("plan: exit %d, want 2 (the missing topic blocks)\n%.2000s", r.code, r.stderr)
	}
	doc := decodeJSON[planDoc](t, r)
	if len(doc.Groups) != groups+1 {
		t.Errorf("plan lists %d groups, want %d", len(doc.Groups), groups+1)
	}
	gp := doc.groupPlan(t, big)
	blocked := 0
	for _, en := range gp.Entries {
		if en.Class == migrate.ClassTopicMissing && en.Action == migrate.ActionBlock {
			blocked++
		}
	}
	if len(gp.Entries) != partitions || blocked != partitions {
		t.Errorf("group %s: %d entries, %d blocked as topic-missing; want %d of each", big, len(gp.Entries), blocked, partitions)
	}

	r = e.cli("migrate", "copy", "--execute", "--backup", e.file("backup"))
	if r.code != 2 || !strings.Contains(r.stderr, topic) || !strings.Contains(r.stderr, "topic-missing") {
		t.Errorf("copy: want exit 2 naming %s as topic-missing, got exit %d\n%.3000s", topic, r.code, r.stderr)
	}
	if got := e.offsets(big); len(got) != 0 {
		t.Errorf("kafka holds %d offsets of group %s after a blocked copy", len(got), big)
	}
}

// createMany creates the given znodes (parents must exist or come earlier in paths' order
// within one parent) with data, 64 requests in flight on the test's session.
func (e *env) createMany(paths []string, data string) {
	e.t.Helper()
	e.parallelZK(paths, func(p string) error {
		_, err := e.raw.Create(p, []byte(data), 0, worldACL())
		return err
	})
}

// deleteMany deletes the given znodes (leaves only), 64 at a time; missing ones are fine.
func (e *env) deleteMany(paths []string) {
	e.parallelZK(paths, func(p string) error {
		if err := e.raw.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		return nil
	})
}

func (e *env) parallelZK(paths []string, op func(string) error) {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := op(p); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("znode %s: %w", p, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		e.t.Error(first)
	}
}
