package contract

import (
	"slices"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// LegacyRecheckerHarness is as LegacyStoreHarness, for the re-check.
type LegacyRecheckerHarness func(t *testing.T) (migrate.LegacyRechecker, Legacy)

// TestLegacyRechecker runs the migrate.LegacyRechecker suite.
func TestLegacyRechecker(t *testing.T, h LegacyRecheckerHarness) {
	cases := []struct {
		clause string
		run    func(t *testing.T, r migrate.LegacyRechecker, l Legacy)
	}{
		{"one group per request, in request order", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			for _, g := range []string{"a", "b", "c"} {
				l.SetOffset(t, g, "t", 0, 1)
			}
			got := recheck(t, r, req("c"), req("a"), req("b"))
			names := make([]string, len(got))
			for i, g := range got {
				names[i] = g.Group
			}
			if want := []string{"c", "a", "b"}; !slices.Equal(names, want) {
				t.Fatalf("re-checked %q, want %q", names, want)
			}
		}},
		{"a fresh read of each requested znode, as requested", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.SetOffset(t, "g", "u", 3, 2)
			planned := readPlanned(t, r, l, "g")
			l.SetOffset(t, "g", "t", 0, 10)
			l.SetOffset(t, "g", "u", 3, 20)
			got := recheck(t, r, migrate.RecheckRequest{Group: "g", Offsets: planned})[0]
			checkOffsets(t, "g", got.Offsets, []migrate.LegacyOffset{{Topic: "t", Partition: 0, Offset: 10}, {Topic: "u", Partition: 3, Offset: 20}})
			for _, o := range got.Offsets {
				if !slices.ContainsFunc(planned, func(p migrate.LegacyOffset) bool { return p.Path == o.Path }) {
					t.Errorf("re-checked path %s was not requested (requested %s)", o.Path, describe(planned))
				}
			}
		}},
		{"only the requested znodes", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.SetOffset(t, "g", "t", 1, 2)
			planned := readPlanned(t, r, l, "g")
			l.SetOffset(t, "g", "t", 2, 3) // created since the plan
			got := recheck(t, r, migrate.RecheckRequest{Group: "g", Offsets: planned[1:]})[0]
			checkOffsets(t, "g", got.Offsets, []migrate.LegacyOffset{{Topic: "t", Partition: 1, Offset: 2}})
		}},
		{"a znode deleted since is absent", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.SetOffset(t, "g", "t", 1, 2)
			planned := readPlanned(t, r, l, "g")
			l.DeleteOffset(t, "g", "t", 0)
			got := recheck(t, r, migrate.RecheckRequest{Group: "g", Offsets: planned})[0]
			checkOffsets(t, "g", got.Offsets, []migrate.LegacyOffset{{Topic: "t", Partition: 1, Offset: 2}})
		}},
		{"a znode gone bad since is reported in Invalid", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			// A 0.7-era name is another znode, not one gone bad: it has no place here.
			kinds := slices.DeleteFunc(slices.Clone(invalidKinds), func(b Bad) bool { return b == BadLegacyName })
			for i := range kinds {
				l.SetOffset(t, "g", "t", int32(i), 1)
			}
			planned := readPlanned(t, r, l, "g")
			for i, bad := range kinds {
				l.SetBad(t, "g", "t", int32(i), bad)
			}
			got := recheck(t, r, migrate.RecheckRequest{Group: "g", Offsets: planned})[0]
			if len(got.Offsets) != len(kinds) {
				t.Fatalf("re-checked %s, want one entry for each of %v", describe(got.Offsets), kinds)
			}
			for _, o := range got.Offsets {
				if o.Invalid == "" || o.Partition < 0 || int(o.Partition) >= len(kinds) {
					t.Errorf("znode %s gone %v re-checked as %s, want Invalid set", o.Path, kinds[max(0, min(int(o.Partition), len(kinds)-1))], describe([]migrate.LegacyOffset{o}))
				}
			}
		}},
		{"fresh live consumers", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			leave := l.Register(t, "g", "c1", tp("t", 0))
			checkLive(t, recheck(t, r, req("g"))[0].LiveConsumers, "c1", tp("t", 0))
			leave()
			if live := recheck(t, r, req("g"))[0].LiveConsumers; len(live) != 0 {
				t.Errorf("after the consumer left: live %q, want none", live)
			}
		}},
		{"no znodes requested: liveness alone", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.Register(t, "g", "c1")
			got := recheck(t, r, req("g"))[0]
			if len(got.Offsets) != 0 {
				t.Errorf("offsets %s, none requested", describe(got.Offsets))
			}
			checkLive(t, got.LiveConsumers, "c1")
		}},
		{"a group missing from the store is returned empty", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			l.Register(t, "g", "c1")
			planned := readPlanned(t, r, l, "g")
			l.DeleteGroup(t, "g")
			got := recheck(t, r, migrate.RecheckRequest{Group: "g", Offsets: planned})[0]
			if got.Group != "g" || len(got.Offsets) != 0 || len(got.LiveConsumers) != 0 {
				t.Fatalf("deleted group re-checked as %+v, want g with nothing", got)
			}
		}},
		{"liveness of a group name the store cannot hold is none, not an error", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			// Kafka group names may hold what a znode name cannot ("/", ".."): a restore to Kafka
			// re-checks such a target's liveness, and nothing can be registered under it.
			l.SetOffset(t, "g", "t", 0, 1)
			got := recheck(t, r, req("team/a"), req(".."), req("g"))
			for i, name := range []string{"team/a", ".."} {
				if got[i].Group != name || len(got[i].Offsets) != 0 || len(got[i].LiveConsumers) != 0 {
					t.Errorf("%q re-checked as %+v, want it with nothing", name, got[i])
				}
			}
			if got[2].Group != "g" {
				t.Errorf("the request after them answered %q, want g", got[2].Group)
			}
		}},
		{"cancelled context is an error", func(t *testing.T, r migrate.LegacyRechecker, l Legacy) {
			l.SetOffset(t, "g", "t", 0, 1)
			if got, err := r.RecheckGroups(cancelled(), []migrate.RecheckRequest{req("g")}); err == nil {
				t.Fatalf("RecheckGroups with a cancelled context = %+v, no error", got)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.clause, func(t *testing.T) {
			r, l := h(t)
			c.run(t, r, l)
		})
	}
}

func req(group string) migrate.RecheckRequest { return migrate.RecheckRequest{Group: group} }

func recheck(t *testing.T, r migrate.LegacyRechecker, reqs ...migrate.RecheckRequest) []migrate.LegacyGroup {
	t.Helper()
	got, err := r.RecheckGroups(ctx(t), reqs)
	if err != nil {
		t.Fatalf("RecheckGroups: %v", err)
	}
	if len(got) != len(reqs) {
		t.Fatalf("RecheckGroups returned %d groups for %d requests", len(got), len(reqs))
	}
	return got
}

// readPlanned is the group's offsets as a plan records them: read by the store itself when it
// is a LegacyStore too, as copy does; the paths are the store's own.
func readPlanned(t *testing.T, r migrate.LegacyRechecker, l Legacy, group string) []migrate.LegacyOffset {
	t.Helper()
	s, ok := r.(migrate.LegacyStore)
	if !ok {
		t.Fatalf("the re-checker %T is not a LegacyStore: the suite takes the plan's paths from its read", r)
	}
	var out []migrate.LegacyOffset
	for _, o := range readGroups(t, s, group)[group].Offsets {
		out = append(out, migrate.LegacyOffset{Topic: o.Topic, Partition: o.Partition, Path: o.Path})
	}
	return out
}
