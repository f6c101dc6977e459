package mirror_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zk2kafka/zk2kafka/migrate"
	"github.com/zk2kafka/zk2kafka/migrate/mirror"
)

// stateLease is a lease frozen in one state; the loop never holds it here.
type stateLease struct {
	migrate.WriteLease
	held   bool
	holder string
	closed bool
}

func (l *stateLease) State() (bool, string) { return l.held, l.holder }
func (l *stateLease) Close()                { l.closed = true }

// TestOpenLease: the groups claimed follow the selection, and a standby refuses to start only
// when told not to wait, naming the holder and closing its place in line.
func TestOpenLease(t *testing.T) {
	const holder = "host-a pid 42"
	list := []string{"billing", "orders"}
	for _, tc := range []struct {
		name    string
		filter  migrate.Filter
		held    bool
		wait    bool
		claims  []string // nil: every group
		refused bool
	}{
		{name: "held", filter: migrate.Filter{Groups: list}, held: true, claims: list},
		{name: "not held, no wait: refused naming the holder", filter: migrate.Filter{Groups: list}, claims: list, refused: true},
		{name: "not held, wait: standby", filter: migrate.Filter{Groups: list}, wait: true, claims: list},
		{name: "regexp claims every group", filter: migrate.Filter{Groups: list, GroupRegex: regexp.MustCompile("^o")}, held: true},
		{name: "renaming map claims every group", filter: migrate.Filter{Groups: list, GroupMap: migrate.GroupMap{"orders": "orders-v2"}}, held: true},
		{name: "identity map keeps the list", filter: migrate.Filter{Groups: list, GroupMap: migrate.GroupMap{"orders": "orders"}}, held: true, claims: list},
		{name: "no selection claims every group", held: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &stateLease{held: tc.held, holder: holder}
			var claimed []string
			opened := false
			lease, err := mirror.OpenLease(context.Background(), func(_ context.Context, groups []string) (migrate.LegacyLease, error) {
				claimed, opened = groups, true
				return fake, nil
			}, tc.filter, tc.wait)
			if !opened {
				t.Fatal("the lease was not opened")
			}
			if !slices.Equal(claimed, tc.claims) || (claimed == nil) != (tc.claims == nil) {
				t.Errorf("claimed %q, want %q (nil: every group)", claimed, tc.claims)
			}
			if tc.refused {
				if !errors.Is(err, migrate.ErrLeaseNotHeld) || !strings.Contains(err.Error(), holder) {
					t.Errorf("err %v, want ErrLeaseNotHeld naming %q", err, holder)
				}
				if lease != nil || !fake.closed {
					t.Errorf("refused: lease %v returned, closed %v; want none returned and closed", lease, fake.closed)
				}
				return
			}
			if err != nil || lease != migrate.LegacyLease(fake) || fake.closed {
				t.Errorf("lease %v, err %v, closed %v; want the open lease", lease, err, fake.closed)
			}
		})
	}
}

// TestOpenLeaseFails: an opener's error is returned as it is.
func TestOpenLeaseFails(t *testing.T) {
	boom := errors.New("session expired")
	_, err := mirror.OpenLease(context.Background(), func(context.Context, []string) (migrate.LegacyLease, error) {
		return nil, boom
	}, migrate.Filter{}, false)
	if !errors.Is(err, boom) {
		t.Errorf("err %v, want %v", err, boom)
	}
}

// TestReadiness: ready only when synced, armed and holding the lease (or taking none), and every
// reason not to be ready is named.
func TestReadiness(t *testing.T) {
	held := func(h bool) func() (bool, string) { return func() (bool, string) { return h, "host-a pid 42" } }
	good := mirror.LoopState{Synced: true, Armed: true}
	for _, tc := range []struct {
		name  string
		state mirror.LoopState
		lease func() (bool, string)
		why   []string // empty: ready
	}{
		{name: "before the first state", why: []string{"first sync", "watches"}},
		{name: "not synced", state: mirror.LoopState{Armed: true}, lease: held(true), why: []string{"first sync"}},
		{name: "not armed", state: mirror.LoopState{Synced: true}, lease: held(true), why: []string{"watches"}},
		{name: "standby", state: good, lease: held(false), why: []string{"standby", "host-a pid 42"}},
		{name: "all good", state: good, lease: held(true)},
		{name: "all good, no lease (dry run)", state: good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mirror.Readiness(tc.state, tc.lease)
			if len(tc.why) == 0 {
				if err != nil {
					t.Errorf("readiness: %v, want ready", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ready, want not ready for %q", tc.why)
			}
			for _, w := range tc.why {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("readiness: %v, want it to name %q", err, w)
				}
			}
		})
	}
}
