package bench_test

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

const zkSessionTimeout = 30 * time.Second

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// dialZK opens one session (servers without chroot) and waits for it. Session events go to a
// callback: go-zookeeper drops them when its event channel is not drained.
func dialZK(servers string, dialer zk.Dialer) (*zk.Conn, error) {
	ready := make(chan struct{})
	var once sync.Once
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			once.Do(func() { close(ready) })
		}
	}
	if dialer == nil {
		dialer = net.DialTimeout
	}
	c, _, err := zk.Connect(strings.Split(servers, ","), zkSessionTimeout, zk.WithLogger(quietZK{}), zk.WithEventCallback(cb), zk.WithDialer(dialer))
	if err != nil {
		return nil, fmt.Errorf("connect to zookeeper %s: %w", servers, err)
	}
	select {
	case <-ready:
		return c, nil
	case <-time.After(zkSessionTimeout):
		c.Close()
		return nil, fmt.Errorf("connect to zookeeper %s: no session after %s", servers, zkSessionTimeout)
	}
}

// dialPool opens n sessions.
func dialPool(servers string, n int, dialer zk.Dialer) ([]*zk.Conn, error) {
	conns := make([]*zk.Conn, 0, n)
	for range n {
		c, err := dialZK(servers, dialer)
		if err != nil {
			closePool(conns)
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closePool(conns []*zk.Conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.Close) // Close waits for the server: in parallel
	}
	wg.Wait()
}

// serialRead is the naive reader a migration script would write: one connection, one request
// at a time, walking the same tree the plan walks (groups, each group's offsets/ids/owners,
// each topic's partitions) and getting and parsing every offset znode. It stops after max
// offsets (0: all) and returns how many it read.
func serialRead(c *zk.Conn, chroot string, max int) (int, error) {
	root := chroot + "/consumers"
	groups, _, err := c.Children(root)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", root, err)
	}
	read := 0
	for _, g := range groups {
		base := root + "/" + g
		// Liveness is part of what a plan must know; absent directories are normal.
		for _, dir := range []string{base + "/ids", base + "/owners"} {
			if _, _, err := c.Children(dir); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return read, fmt.Errorf("list %s: %w", dir, err)
			}
		}
		topics, _, err := c.Children(base + "/offsets")
		if err != nil {
			return read, fmt.Errorf("list %s/offsets: %w", base, err)
		}
		for _, t := range topics {
			dir := base + "/offsets/" + t
			parts, _, err := c.Children(dir)
			if err != nil {
				return read, fmt.Errorf("list %s: %w", dir, err)
			}
			for _, p := range parts {
				path := dir + "/" + p
				data, _, err := c.Get(path)
				if err != nil {
					return read, fmt.Errorf("get %s: %w", path, err)
				}
				if _, err := strconv.ParseInt(string(data), 10, 64); err != nil {
					return read, fmt.Errorf("znode %s: %w", path, err)
				}
				if read++; max > 0 && read >= max {
					return read, nil
				}
			}
		}
	}
	return read, nil
}

// rawFetch only gets the given znodes, inflight requests outstanding over the pool, nothing
// else: no listing, no parsing, no result kept. It is the ceiling of this ZooKeeper for the
// plan's dominant work.
func rawFetch(conns []*zk.Conn, inflight int, paths []string) error {
	return pipelined(conns, inflight, len(paths), func(c *zk.Conn, i int) error {
		if _, _, err := c.Get(paths[i]); err != nil {
			return fmt.Errorf("get %s: %w", paths[i], err)
		}
		return nil
	})
}

// zkRequest is one ZooKeeper read: a listing, or a Get.
type zkRequest struct {
	path string
	list bool
}

// blindFetch makes the given reads as rawFetch makes its Gets: a plan's own requests, listings
// included, with none of its logic (no request waits for another's answer, nothing is parsed
// or kept). Between raw and plan, it tells what the listings cost from what plan's code costs.
// A missing directory (ids/, owners/) is normal.
func blindFetch(conns []*zk.Conn, inflight int, reqs []zkRequest) error {
	return pipelined(conns, inflight, len(reqs), func(c *zk.Conn, i int) error {
		r := reqs[i]
		var err error
		if r.list {
			if _, _, err = c.Children(r.path); errors.Is(err, zk.ErrNoNode) {
				err = nil
			}
		} else {
			_, _, err = c.Get(r.path)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", r.path, err)
		}
		return nil
	})
}

// pipelined runs op(c, i) for every i in [0, n), inflight goroutines each looping over the
// next i on its own connection of the pool (go-zookeeper pipelines one connection's calls),
// and returns the first error, after which the others stop.
func pipelined(conns []*zk.Conn, inflight, n int, op func(c *zk.Conn, i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range min(inflight, n) {
		c := conns[w%len(conns)]
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := op(c, int(i)); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// removeTree deletes root and everything below it, deepest level first, many deletes in flight.
func removeTree(servers, root string) error {
	conns, err := dialPool(servers, 4, nil)
	if err != nil {
		return err
	}
	defer closePool(conns)
	if ok, _, err := conns[0].Exists(root); err != nil || !ok {
		return err // a failed seed may not have created it
	}
	levels := [][]string{{root}}
	for {
		var next []string
		var mu sync.Mutex
		parents := levels[len(levels)-1]
		err := forPaths(conns, parents, func(c *zk.Conn, p string) error {
			kids, _, err := c.Children(p)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("list %s: %w", p, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range kids {
				next = append(next, p+"/"+k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(next) == 0 {
			break
		}
		levels = append(levels, next)
	}
	for i := len(levels) - 1; i >= 0; i-- {
		err := forPaths(conns, levels[i], func(c *zk.Conn, p string) error {
			if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("delete %s: %w", p, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// forPaths runs op on every path, 256 at a time over the pool, and returns the first error.
func forPaths(conns []*zk.Conn, paths []string, op func(*zk.Conn, string) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := range min(256, len(paths)) {
		c := conns[w%len(conns)]
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(paths)); i = next.Add(1) - 1 {
				if err := op(c, paths[i]); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
