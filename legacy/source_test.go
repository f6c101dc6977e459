package legacy

import (
	"context"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/migratetest"
	"github.com/zk2kafka/zk2kafka/zkreader"
	"github.com/zk2kafka/zk2kafka/zkreader/datadir"
)

// TestCapabilities: each source declares what it can do, and a verb that needs what it lacks
// gets the source's own reason.
func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	dd, err := Open(ctx, Config{DataDir: &datadir.Config{Path: "../zkreader/datadir/testdata/3.9.3", Chroot: "/legacy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	static := NewStatic(migratetest.NewLegacyStore(), nil)
	cases := []struct {
		name                        string
		src                         *Source
		writer, watcher, unchanging bool
		writeIntoKafka              bool // without --legacy-stopped
		where                       string
	}{
		{name: "data directory", src: dd, where: "under /legacy/consumers"},
		{name: "static read-only store", src: static, writeIntoKafka: true, where: "under /consumers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := c.src.LegacyWriter()
			if (w != nil) != c.writer || (err == nil) != c.writer {
				t.Errorf("LegacyWriter() = %v, %v; want a writer: %v", w, err, c.writer)
			}
			if err != nil && err.Error() == "" {
				t.Error("a read-only source gives no reason")
			}
			if (c.src.Watch != nil) != c.watcher {
				t.Errorf("Watch set: %v, want %v", c.src.Watch != nil, c.watcher)
			}
			if err := c.src.CheckWriteIntoKafka(false); (err == nil) != c.writeIntoKafka {
				t.Errorf("CheckWriteIntoKafka(false) = %v, want allowed: %v", err, c.writeIntoKafka)
			} else if err != nil && !strings.Contains(err.Error(), "--legacy-stopped") {
				t.Errorf("the refusal %q does not name --legacy-stopped", err)
			}
			if _, snap := c.src.Store.(migrate.SnapshotStore); snap == c.writeIntoKafka {
				t.Errorf("Store is a migrate.SnapshotStore: %v; want it to be one when a write into Kafka needs --legacy-stopped", snap)
			}
			if _, ok := c.src.Store.(migrate.LegacyRechecker); !ok {
				t.Error("Store hides its LegacyRechecker: copy --recheck=gates and restore would refuse it")
			}
			if err := c.src.CheckWriteIntoKafka(true); err != nil {
				t.Errorf("CheckWriteIntoKafka(true) = %v", err)
			}
			if c.src.Where != c.where {
				t.Errorf("Where = %q, want %q", c.src.Where, c.where)
			}
		})
	}
	if dd.Unchanging == "" || dd.BeforeWrite == nil || len(dd.Notes) == 0 {
		t.Errorf("a data directory declares no Unchanging (%q), BeforeWrite or Notes (%q)", dd.Unchanging, dd.Notes)
	}
}

// TestEnsembleIdentity: the servers sorted and without duplicates, the chroot kept.
func TestEnsembleIdentity(t *testing.T) {
	cases := []struct{ servers, want, where string }{
		{"zk2:2181,zk1:2181,zk2:2181/kafka", "zk1:2181,zk2:2181/kafka", "under /kafka/consumers"},
		{"zk1", "zk1:2181", "under /consumers"},
	}
	for _, c := range cases {
		id, where := EnsembleIdentity(c.servers)
		if got := strings.Join(id.ZooKeeper, ",") + id.Chroot; got != c.want || where != c.where {
			t.Errorf("EnsembleIdentity(%q) = %q, %q; want %q, %q", c.servers, got, where, c.want, c.where)
		}
	}
}

// TestOpenRefusesStormOnDataDir: the Storm layout lives only in a running ensemble.
func TestOpenRefusesStormOnDataDir(t *testing.T) {
	_, err := Open(context.Background(), Config{DataDir: &datadir.Config{Path: "x"}, Storm: &zkreader.StormLayout{}})
	if err == nil || !strings.Contains(err.Error(), "--layout storm") {
		t.Fatalf("err = %v, want the storm/data-directory refusal", err)
	}
}
