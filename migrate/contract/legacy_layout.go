package contract

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// Layout says how a LegacyStore's tree differs from the consumers layout (/consumers/<group>);
// its zero value is that layout. TestLegacyStoreLayout checks the documented behaviour of each
// difference in place of the clause it replaces, never skipping it.
type Layout struct {
	// OneGroup is set when the store holds just this one group (a storm-kafka spout's folder):
	// Legacy arranges no other, the clauses about several groups check that the store lists
	// just this one and reads every other group empty, and "g" in the clauses is this group.
	OneGroup string
	// Path is how the path of an offset ends; nil: /consumers/<group>/offsets/<topic>/<partition>.
	Path func(group, topic string, partition int32) string
	// FixedLiveness is set when the store has no liveness registrations (Legacy.Register is
	// never called): every read of a group the store holds reports Liveness, fixed.
	FixedLiveness bool
	Liveness      []string
	// PaddedWithoutNote: whitespace around the data is no anomaly (JSON), read without a Note.
	PaddedWithoutNote bool
	// ReadOnly: the store has a ReadOnly() string method saying why nothing is written to it.
	ReadOnly bool
}

// group is the name the clauses use for the store's own group: g, unless it holds just one.
func (lay Layout) group() string {
	if lay.OneGroup != "" {
		return lay.OneGroup
	}
	return "g"
}

// holds reports whether Legacy may arrange group: with OneGroup, only that one.
func (lay Layout) holds(group string) bool { return lay.OneGroup == "" || group == lay.OneGroup }

// listed is what ListGroups returns when groups exist: them all, or the one group.
func (lay Layout) listed(groups ...string) []string {
	if lay.OneGroup != "" {
		return []string{lay.OneGroup}
	}
	return slices.Sorted(slices.Values(groups))
}

func (lay Layout) path(group, topic string, p int32) string {
	if lay.Path != nil {
		return lay.Path(group, topic, p)
	}
	return fmt.Sprintf("/consumers/%s/offsets/%s/%d", group, topic, p)
}

// checkLive checks a read group's liveness: the registrations of id (and owned), or with
// FixedLiveness the fixed value.
func (lay Layout) checkLive(t *testing.T, live []string, id string, owned ...migrate.TopicPartition) {
	t.Helper()
	if lay.FixedLiveness {
		lay.checkFixed(t, live)
		return
	}
	checkLive(t, live, id, owned...)
}

// checkNoLive checks the liveness of a group of the store without registrations.
func (lay Layout) checkNoLive(t *testing.T, live []string, what string) {
	t.Helper()
	if lay.FixedLiveness {
		lay.checkFixed(t, live)
		return
	}
	if len(live) != 0 {
		t.Errorf("%s: live %q, want none", what, live)
	}
}

func (lay Layout) checkFixed(t *testing.T, live []string) {
	t.Helper()
	if !slices.Equal(live, lay.Liveness) {
		t.Errorf("live %q, want the store's fixed liveness %q", live, lay.Liveness)
	}
}

// register registers a consumer unless the store has no registrations.
func (lay Layout) register(t *testing.T, l Legacy, group, id string, owned ...migrate.TopicPartition) (leave func()) {
	if lay.FixedLiveness {
		return func() {}
	}
	return l.Register(t, group, id, owned...)
}

// checkOffsets compares valid offsets on topic, partition and offset, in order, and checks
// what the store adds: no Invalid, a path ending as the layout's, a modification time.
func (lay Layout) checkOffsets(t *testing.T, group string, got, want []migrate.LegacyOffset) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("offsets %s, want %s", describe(got), describe(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Topic != w.Topic || g.Partition != w.Partition || g.Offset != w.Offset || g.Invalid != "" {
			t.Errorf("offset %d: %s, want %s", i, describe(got[i:i+1]), describe(want[i:i+1]))
		}
		if suffix := lay.path(group, w.Topic, w.Partition); !strings.HasSuffix(g.Path, suffix) {
			t.Errorf("offset %s/%d: path %q, want the znode's full path, ending in %s", w.Topic, w.Partition, g.Path, suffix)
		}
		if g.Mtime.IsZero() {
			t.Errorf("offset %s/%d: no mtime, want the znode's modification time", w.Topic, w.Partition)
		}
	}
}

// readOnlyCase is the clause of a read-only layout: the store says why it is not written.
var readOnlyCase = struct {
	clause string
	run    func(t *testing.T, s migrate.LegacyStore, l Legacy)
}{"ReadOnly/the store says why nothing is written to it", func(t *testing.T, s migrate.LegacyStore, _ Legacy) {
	ro, ok := s.(interface{ ReadOnly() string })
	if !ok {
		t.Fatalf("the read-only store %T has no ReadOnly method", s)
	}
	if ro.ReadOnly() == "" {
		t.Error("ReadOnly() is empty: cmd refuses the writing verbs with its reason")
	}
	if _, ok := s.(migrate.LegacyOffsetWriter); ok {
		t.Errorf("the read-only store %T is a LegacyOffsetWriter", s)
	}
}}
