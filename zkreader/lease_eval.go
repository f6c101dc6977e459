package zkreader

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// The lease's evaluation: its znode created on the current session, the folder listed and
// watched, the line read in sequence order.

// run evaluates the lease at start, on every change of the folder or the session, and after a
// failure (retried).
func (l *Lease) run(ctx context.Context) {
	defer close(l.done)
	probed := make(chan struct{})
	defer func() { <-probed }()
	go func() {
		defer close(probed)
		l.probe(ctx)
	}()
	first := true
	for {
		err := l.evaluate()
		if first {
			l.first <- err
			first = false
			if err != nil {
				return
			}
		}
		var retry <-chan time.Time
		if err != nil && ctx.Err() == nil {
			l.log.Warn("dual-commit lease not evaluated, retrying", "err", err)
			retry = time.After(retryArm)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
		case <-retry:
		}
	}
}

// probe proves the session every probeEvery: an answered Exists of our znode, sent at s, says
// the server had the session at s or later. A znode gone asks for an evaluation (created
// again, at the end of the line).
func (l *Lease) probe(ctx context.Context) {
	t := time.NewTicker(probeEvery(l.timeout()))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		sid, node := l.sessionID, l.node
		l.mu.Unlock()
		if sid == 0 || node == "" {
			continue
		}
		sent := time.Now()
		ok, st, err := l.c.Exists(l.dir + "/" + node)
		switch {
		case err != nil:
			continue // no proof: the window runs out unless a later probe answers
		case !ok || st.EphemeralOwner != sid:
			l.poke()
			continue
		}
		l.mu.Lock()
		if l.node == node {
			l.proved(sid, sent)
		}
		l.mu.Unlock()
	}
}

// proved records that a request sent at sent was answered on session sid; l.mu is held.
func (l *Lease) proved(sid int64, sent time.Time) {
	if l.sessionID == sid && sent.After(l.proof) {
		l.proof = sent
		l.updateLocked(time.Now())
	}
}

// leaseNode is one znode of the lease folder.
type leaseNode struct {
	name    string
	seq     int64
	session int64 // its ephemeral owner
	owner   LeaseOwner
	valid   bool // its data parsed
}

func (n leaseNode) String() string {
	if !n.valid {
		return fmt.Sprintf("znode %s (unreadable data, session 0x%x)", n.name, n.session)
	}
	return n.owner.String() + " (znode " + n.name + ")"
}

// evaluate creates our znode on the current session if needed, lists the folder (setting its
// watch again if it fired) and decides whether we hold the lease.
func (l *Lease) evaluate() error {
	l.mu.Lock()
	sid, node, watching := l.sessionID, l.node, l.watching
	l.mu.Unlock()
	if sid == 0 || l.c.State() != zk.StateHasSession {
		return nil // the next session event evaluates again
	}
	if node == "" {
		if err := l.create(); err != nil {
			return err
		}
	}
	names, err := l.list(sid, watching)
	if err != nil {
		return err
	}
	nodes, err := l.read(names)
	if err != nil {
		return err
	}
	l.decide(sid, nodes, time.Now())
	return nil
}

// create makes our ephemeral sequential znode in the lease folder.
func (l *Lease) create() error {
	if err := ensurePath(l.c, l.dir); err != nil {
		return err
	}
	p, err := l.c.Create(l.dir+"/lease-", l.data, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return wrapPath(l.dir+"/lease-", err)
	}
	l.log.Debug("dual-commit lease znode created", "znode", p)
	return nil
}

// list reads the lease folder's children on session sid, setting the folder's watch unless it
// is held, and records the answer as proof that the session was alive when it was sent.
func (l *Lease) list(sid int64, watching bool) ([]string, error) {
	var names []string
	var err error
	l.mu.Lock()
	fires := l.fires
	l.mu.Unlock()
	sent := time.Now()
	if watching {
		names, _, err = l.c.Children(l.dir)
	} else {
		names, _, _, err = l.c.ChildrenW(l.dir)
	}
	if err != nil {
		return nil, wrapPath(l.dir, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !watching {
		// go-zookeeper may deliver the watch's fire before this line: then it is set again by
		// the evaluation that fire asked for, not taken as set.
		l.watching = l.sessionID == sid && l.fires == fires
	}
	l.proved(sid, sent)
	return names, nil
}

// decide takes the folder's znodes, read on session sid, and settles whether we hold the
// lease: ours is the first of our session's znodes, and no earlier znode of another session
// is unreadable or overlaps our groups.
func (l *Lease) decide(sid int64, nodes []leaseNode, now time.Time) {
	var mine []leaseNode
	for _, n := range nodes {
		if n.session == sid {
			mine = append(mine, n)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sessionID != sid {
		return // the session changed meanwhile: the event evaluates again
	}
	if len(mine) == 0 {
		// Deleted by someone, or a create lost with its answer: create one again.
		l.node, l.recipe = "", false
		l.updateLocked(now)
		l.poke()
		return
	}
	own := mine[0]
	l.deleteExtra(mine[1:])
	l.node, l.recipe, l.blocker = own.name, true, ""
	if b, ok := l.blockerOf(nodes, own, sid); ok {
		l.recipe, l.blocker = false, b.String()
	}
	l.updateLocked(now)
	if !l.writable && l.blocker != "" && l.blocker != l.logged {
		l.logged = l.blocker
		l.log.Warn("dual-commit lease held by another instance on overlapping groups: standing by, nothing is written",
			"holder", l.blocker, "znode", l.node)
	}
}

// deleteExtra deletes our session's later znodes: a create retried after a lost answer left
// two, and the later ones only wait behind ours.
func (l *Lease) deleteExtra(extra []leaseNode) {
	for _, n := range extra {
		go func() {
			if err := l.c.Delete(l.dir+"/"+n.name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				l.log.Debug("extra dual-commit lease znode not deleted: it goes with the session", "znode", n.name, "err", err)
			}
		}()
	}
}

// blockerOf returns the first znode before own, of another session, that is unreadable or
// whose owner's groups overlap ours.
func (l *Lease) blockerOf(nodes []leaseNode, own leaseNode, sid int64) (leaseNode, bool) {
	for _, n := range nodes {
		if n.seq >= own.seq {
			break
		}
		if n.session != sid && (!n.valid || n.owner.overlaps(l.owner)) {
			return n, true
		}
	}
	return leaseNode{}, false
}

// read returns the folder's lease znodes by sequence, with their data and ephemeral owners.
func (l *Lease) read(names []string) ([]leaseNode, error) {
	var nodes []leaseNode
	for _, name := range names {
		i := strings.LastIndex(name, "lease-")
		if i < 0 {
			continue // not a lease znode
		}
		seq, err := strconv.ParseInt(name[i+len("lease-"):], 10, 64)
		if err != nil {
			continue
		}
		data, st, err := l.c.Get(path.Join(l.dir, name))
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone meanwhile: its deletion fires the watch again
		}
		if err != nil {
			return nil, wrapPath(path.Join(l.dir, name), err)
		}
		n := leaseNode{name: name, seq: seq, session: st.EphemeralOwner}
		n.valid = json.Unmarshal(data, &n.owner) == nil && n.owner.Host != ""
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b leaseNode) int { return cmp.Compare(a.seq, b.seq) })
	return nodes, nil
}
