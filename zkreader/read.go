package zkreader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// denied is the Invalid reason of a znode the session may not read.
const denied = "access denied (ACL)"

// ListGroups returns the children of <chroot>/consumers, sorted. A missing /consumers means no
// groups; a missing chroot is an error, because it is almost always a typo in the connect string.
func (r *Reader) ListGroups(ctx context.Context) ([]string, error) {
	p := r.path("/consumers")
	var groups []string
	err := r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		names, _, err := c.Children(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return r.checkChroot(c)
		case errors.Is(err, zk.ErrNoAuth):
			return fmt.Errorf("list groups under %s: %s: %w", p, denied, err)
		case err != nil:
			return fmt.Errorf("list groups under %s: %w", p, err)
		}
		groups = names
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(groups)
	return groups, nil
}

// checkChroot fails when the chroot itself does not exist.
func (r *Reader) checkChroot(c *zk.Conn) error {
	if r.chroot == "" {
		return nil
	}
	ok, _, err := c.Exists(r.chroot)
	if err != nil {
		return fmt.Errorf("check chroot %s: %w", r.chroot, err)
	}
	if !ok {
		return fmt.Errorf("zookeeper %s: the chroot %s does not exist", r.servers(), r.chroot)
	}
	return nil
}

// ReadGroups reads each group's offsets and liveness registrations and emits each group as soon
// as all its reads are done. Up to GroupsInFlight groups are read at once, their requests
// pipelined over the pool (at most InFlight outstanding). emit is called from the caller's
// goroutine, never concurrently. An error (connection loss, session expiry, a cancelled ctx,
// emit's own error) ends the read: groups already emitted must then not be trusted either.
func (r *Reader) ReadGroups(ctx context.Context, groups []string, emit func(migrate.LegacyGroup) error) error {
	var todo []string
	seen := make(map[string]bool, len(groups))
	for _, g := range groups {
		if err := ValidateName(g); err != nil {
			return fmt.Errorf("read group %q: not a valid group name: %w", g, err)
		}
		if !seen[g] {
			seen[g] = true
			todo = append(todo, g)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	wave, read := r.waves()
	type result struct {
		groups []migrate.LegacyGroup
		err    error
	}
	jobs := make(chan []string)
	results := make(chan result)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		for lo := 0; lo < len(todo); lo += wave {
			select {
			case jobs <- todo[lo:min(lo+wave, len(todo))]:
			case <-ctx.Done():
				return
			}
		}
	})
	for range min((len(todo)+wave-1)/wave, max(1, r.groupsInFlight/wave)) {
		wg.Go(func() {
			for gs := range jobs {
				lgs, err := read(ctx, gs)
				select {
				case results <- result{lgs, err}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	var first error
	for res := range results {
		if first != nil {
			continue // drain until the workers have stopped
		}
		err := res.err
		for _, g := range res.groups {
			if err != nil {
				break
			}
			if err = emit(g); err != nil {
				err = fmt.Errorf("read group %q: emit: %w", g.Group, err)
			}
		}
		if err != nil {
			first = err
			cancel()
		}
	}
	if first == nil {
		// A cancellation may have stopped the feeder before every group was read.
		first = ctx.Err()
	}
	return first
}

// waves says how ReadGroups' workers take groups: one at a time on the single path; on the
// multiRead path several, whose reads share multiRead batches (three requests per wave instead
// of three per group). GroupsInFlight bounds the groups held either way.
func (r *Reader) waves() (int, func(context.Context, []string) ([]migrate.LegacyGroup, error)) {
	if r.multi.Load() {
		return max(1, min(multiWave, r.groupsInFlight/8)), r.readGroupsMulti
	}
	return 1, func(ctx context.Context, gs []string) ([]migrate.LegacyGroup, error) {
		g, err := r.readGroup(ctx, gs[0])
		return []migrate.LegacyGroup{g}, err
	}
}
