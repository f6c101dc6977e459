package zkreader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// The watcher's fast path (ZooKeeper 3.6+): one persistent recursive watch on /consumers,
// set with addWatch on the side channel (side.go), instead of a one-shot watch per folder and
// offset znode. Read from ZooKeeper's own sources (3.6.4, 3.8.4, 3.9.3):
//
//	request:  RequestHeader{xid, type int32 = 106} + AddWatchRequest{path ustring, mode int32}
//	          (mode: ZooDefs.AddWatchModes.persistentRecursive = 1)
//	response: ReplyHeader{xid, zxid, err} + ErrorResponse{err int32 = 0}
//	          (FinalRequestProcessor, case OpCode.addWatch: no ACL check, no NoNode: a path
//	          that does not exist yet is watched all the same)
//
// WatchManager.triggerWatch walks the changed path and each parent: a recursive watch on one of
// them gets NodeCreated, NodeDataChanged and NodeDeleted of every znode below (and of the path
// itself), never NodeChildrenChanged, and is not removed by firing. The event arrives as any
// notification (xid -1); go-zookeeper hands it to the event callback (Conn.sendEvent) and its
// notifyWatches finds no watcher of its own for the path and does nothing else with it.
//
// Watches live with the connection on the server (ServerCnxn is the Watcher). go-zookeeper
// knows nothing of ours, so its setWatches after a reconnect leaves it out: it is added again
// here. DataTree.setWatches, unlike for one-shot data watches with their relativeZxid, replays
// nothing for persistent watches (it only registers them again), and neither does addWatch: a
// change made while disconnected is never notified. After every re-add each selected group is
// reported changed and the list too, so the mirror reads them again, as after a session expiry.
const (
	opAddWatch        int32 = 106
	addWatchRecursive int32 = 1 // ZooDefs.AddWatchModes.persistentRecursive
)

// appendAddWatch appends an AddWatchRequest for a persistent recursive watch on p.
func appendAddWatch(b []byte, p string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
	b = append(b, p...)
	return binary.BigEndian.AppendUint32(b, uint32(addWatchRecursive))
}

// errNoAddWatch: the server answered addWatch as a request it does not know (before 3.6 after
// all: one that was down when the versions were asked). The watcher goes back to one-shot
// watches for good.
var errNoAddWatch = errors.New("zookeeper server does not serve addWatch")

// addWatch sets the persistent recursive watch on the list's path. go-zookeeper's own request
// goes first: its answer shows the connection past the handshake and the credentials, so ours
// cannot overtake them (side.go).
func (w *Watcher) addWatch(ctx context.Context) error {
	p := w.recursivePath()
	err := w.r.fanOut(ctx, 1, func(c *zk.Conn, _ int) error {
		_, _, err := c.Exists(p)
		return err
	})
	if err != nil {
		return fmt.Errorf("watch %s: %w", p, err)
	}
	cc := w.r.sessions[0].sideConn()
	if cc == nil {
		return fmt.Errorf("watch %s: %w", p, errSideNotReady)
	}
	xid, ch, err := cc.sideSend(opAddWatch, appendAddWatch(nil, p))
	if err != nil {
		return fmt.Errorf("watch %s: %w", p, err)
	}
	rep, err := cc.sideWait(ctx, xid, ch)
	switch {
	case err != nil:
		return fmt.Errorf("watch %s: %w", p, err)
	case rep.code == errUnimplemented:
		if w.persistent.CompareAndSwap(true, false) {
			w.r.log.Warn("zookeeper server does not serve addWatch: one-shot watches from now on", "server", cc.RemoteAddr())
		}
		return fmt.Errorf("watch %s: %w", p, errNoAddWatch)
	case rep.code != 0:
		return fmt.Errorf("watch %s: %w", p, codeError(rep.code))
	}
	w.added.Add(1)
	return nil
}

// recursiveTarget maps an event of the recursive watch on /consumers to what today's one-shot
// watches report for it: list, a change of the list of groups (/consumers or a group's folder
// created or deleted); group, a change of that selected group, for exactly the znodes and
// kinds of change the one-shot watches see (watch_set.go's arm): the offsets, ids and owners
// folders coming and going, a topic folder of offsets or owners coming and going, an offset
// znode created, set or deleted, a registration under ids or owners/<t> coming and going.
// Anything else (a registration rewritten in place, znodes of other names) is not reported.
func (run *watchRun) recursiveTarget(ev zk.Event) (list bool, group string) {
	if run.w.storm != nil {
		return run.stormTarget(ev)
	}
	comesOrGoes := ev.Type == zk.EventNodeCreated || ev.Type == zk.EventNodeDeleted
	root := run.w.listPath()
	if ev.Path == root {
		return comesOrGoes, ""
	}
	rel, ok := strings.CutPrefix(ev.Path, root+"/")
	if !ok {
		return false, ""
	}
	parts := strings.Split(rel, "/")
	if !run.groups[parts[0]] || len(parts) == 1 {
		return len(parts) == 1 && comesOrGoes, ""
	}
	folder, depth := parts[1], len(parts)-1 // depth below the group's folder
	switch {
	case folder != "offsets" && folder != "ids" && folder != "owners", depth > 3:
		return false, ""
	case folder == "ids" && depth > 2:
		return false, ""
	case folder == "offsets" && depth == 3:
		return false, parts[0] // an offset znode: a data watch sees it set too
	}
	if comesOrGoes {
		return false, parts[0]
	}
	return false, ""
}

// watchLost: on the fast path a lost connection takes the persistent watch with it (the
// server drops a connection's watches) and go-zookeeper does not set it again. lost is true
// from a Disconnected until the next HasSession, when the watch is added again.
type watchLost struct {
	lost  bool // disconnected since the watch was last added
	readd bool // reconnected after that: add it again
}

// session follows one session event; only the fast path uses it.
func (l *watchLost) session(ev zk.Event) {
	switch ev.State {
	case zk.StateDisconnected:
		l.lost = true
	case zk.StateHasSession:
		if l.lost {
			l.lost, l.readd = false, true
		}
	}
}
