package zkreader

import (
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate/contract"
)

// TestWriteLeaseContract runs migrate/contract's lease suite on the real lease: each
// contender is a watcher session of its own through a proxy the case can cut silently, all on
// one test root, with overlapping selections (all groups).
func TestWriteLeaseContract(t *testing.T) {
	contract.TestWriteLease(t, func(t *testing.T) contract.LeaseSetup {
		e := newEnv(t)
		pid := 0
		return contract.LeaseSetup{Open: func(t *testing.T) contract.Contender {
			p := newProxy(t, e.zk)
			pid++
			// The server's minimum session timeout (2 x tickTime): the cut case waits for it.
			_, l := openLease(t, p.addr()+e.root, 4*time.Second, owner(pid))
			return contract.Contender{Lease: l, Close: l.Close, Cut: p.blackhole}
		}}
	})
}
