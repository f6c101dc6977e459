package seed_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// connect opens a test's own ZooKeeper session, independent of the one seed used.
func connect(t testing.TB, servers string) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(strings.Split(servers, ","), 30*time.Second,
		zk.WithLogger(quiet{}), zk.WithEventCallback(func(zk.Event) {}))
	if err != nil {
		t.Fatalf("connect to zookeeper %s: %v", servers, err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// readTree reads every znode below root (root excluded) with its data, many reads in flight.
func readTree(t testing.TB, conn *zk.Conn, root string) map[string]string {
	t.Helper()
	var (
		mu    sync.Mutex
		out   = map[string]string{}
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, 128)
	)
	var walk func(path string)
	walk = func(path string) {
		defer wg.Done()
		slots <- struct{}{}
		kids, _, err := conn.Children(path)
		<-slots
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		for _, k := range kids {
			child := path + "/" + k
			wg.Add(1)
			go func() {
				slots <- struct{}{}
				data, _, err := conn.Get(child)
				<-slots
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					out[child] = string(data)
				}
				mu.Unlock()
				walk(child)
			}()
		}
	}
	wg.Add(1)
	walk(root)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("read tree %s: %v", root, err)
	}
	return out
}

// removeTree deletes root and everything below it, deepest first: tests clean up what they
// seeded so a shared stack does not fill up.
func removeTree(t testing.TB, conn *zk.Conn, root string) {
	t.Helper()
	if ok, _, err := conn.Exists(root); err != nil || !ok {
		if err != nil {
			t.Errorf("remove %s: %v", root, err)
		}
		return // a failed seed may not have created it
	}
	nodes := readTree(t, conn, root)
	byDepth := map[int][]string{}
	deepest := 0
	for p := range nodes {
		d := strings.Count(p, "/")
		byDepth[d] = append(byDepth[d], p)
		deepest = max(deepest, d)
	}
	slots := make(chan struct{}, 128)
	for d := deepest; d > 0; d-- {
		var wg sync.WaitGroup
		for _, p := range byDepth[d] {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					t.Errorf("delete %s: %v", p, err)
				}
			})
		}
		wg.Wait()
	}
	if err := conn.Delete(root, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("delete %s: %v", root, err)
	}
}

// offsetPath splits ".../consumers/<g>/offsets/<t>/<p>" relative to consumers.
func offsetPath(rel string) (group, topic string, partition int32, ok bool) {
	f := strings.Split(rel, "/")
	if len(f) != 4 || f[1] != "offsets" {
		return "", "", 0, false
	}
	p, err := strconv.ParseInt(f[3], 10, 32)
	if err != nil {
		return "", "", 0, false
	}
	return f[0], f[2], int32(p), true
}
