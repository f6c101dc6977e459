package zkreader

import (
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate/contract"
)

// TestWatcherVersions runs the watcher's contract suite and a plain reconnect on ZooKeeper
// servers of scripts/zkversions on the path their version gets, detected: one-shot watches on 3.5 (which would close the
// connection on an addWatch), the persistent recursive watch on 3.9. The zk profile's own
// server (3.8) runs it on both paths in TestLegacyWatcherContract.
func TestWatcherVersions(t *testing.T) {
	skipUnlessVersionServers(t)
	for _, v := range []struct {
		version    string
		persistent bool
	}{{"3.5.10", false}, {"3.9.3", true}} {
		t.Run(v.version, func(t *testing.T) {
			addr := startZooKeeper(t, v.version)
			legacy := func(t *testing.T) *zkLegacy { return newZKLegacyOn(t, newEnvAt(t, addr)) }
			// openWatcherT checks the path taken against the server's version.
			contract.TestLegacyWatcher(t, watcherHarness(legacy, false))
			t.Run("a plain reconnect", func(t *testing.T) { testWatcherReconnect(t, newEnvAt(t, addr), !v.persistent) })
			w := openWatcherT(t, Config{Servers: addr}, false, nil)
			if got := w.persistent.Load(); got != v.persistent {
				t.Fatalf("ZooKeeper %s: persistent watch %v, want %v", v.version, got, v.persistent)
			}
		})
	}
}
