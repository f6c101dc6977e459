package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zk2kafka/zk2kafka/migrate"
)

func TestRateMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at   time.Duration // since t0
		n    int
		want float64 // -1: no rate yet
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"first sample: no rate", []step{{0, 10000, -1}}},
		{"zero interval: no rate, however much was done", []step{{0, 0, -1}, {0, 10000, -1}}},
		{"near-zero interval (the copy's 1,644,821,383/s): no rate", []step{{0, 0, -1}, {6 * time.Microsecond, 9869, -1}}},
		{"under a second: no rate", []step{{0, 0, -1}, {999 * time.Millisecond, 5000, -1}}},
		{"a second: the rate", []step{{0, 0, -1}, {500 * time.Millisecond, 400, -1}, {time.Second, 1000, 1000}}},
		{"a burst at the start is averaged over the span", []step{{0, 0, -1}, {time.Millisecond, 10000, -1}, {2 * time.Second, 10000, 5000}}},
		{"over the last five seconds only", []step{
			{0, 0, -1}, {time.Second, 100000, 100000}, {6 * time.Second, 101000, 200}, {7 * time.Second, 102000, 2000.0 / 6}, // from the sample at 1 s: the newest at or before 7 s - 5 s
		}},
		{"a count going backwards starts again", []step{{0, 0, -1}, {2 * time.Second, 2000, 1000}, {3 * time.Second, 10, -1}, {4 * time.Second, 510, 500}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m rateMeter
			for i, s := range tc.steps {
				r, ok := m.add(t0.Add(s.at), s.n)
				switch {
				case s.want < 0 && ok:
					t.Errorf("step %d (%s, %d): rate %.1f, want none yet", i, s.at, s.n, r)
				case s.want >= 0 && (!ok || r != s.want):
					t.Errorf("step %d (%s, %d): rate %.1f (ok %v), want %.1f", i, s.at, s.n, r, ok, s.want)
				}
			}
		})
	}
}

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressDrawsOnATerminalOnly(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var off bytes.Buffer
	p := newProgressOn(&off, false, clock.now)
	read := p.reads("plan: reading ZooKeeper")
	read(migrate.ReadProgress{GroupsTotal: 4})
	read(migrate.ReadProgress{Groups: 4, GroupsTotal: 4, Offsets: 400})
	p.finish()
	if off.Len() != 0 {
		t.Errorf("not a terminal, yet drawn: %q", off.String())
	}

	var on bytes.Buffer
	p = newProgressOn(&on, true, clock.now)
	read = p.reads("plan: reading ZooKeeper")
	read(migrate.ReadProgress{GroupsTotal: 4})
	if !strings.Contains(on.String(), "plan: reading ZooKeeper") {
		t.Errorf("the bar is not drawn at the phase's start: %q", on.String())
	}
	clock.advance(time.Millisecond)
	read(migrate.ReadProgress{Groups: 1, GroupsTotal: 4, Offsets: 10000})
	if strings.Contains(on.String(), "offsets/s") {
		t.Errorf("a rate after 1 ms: %q", on.String())
	}
	clock.advance(2 * time.Second)
	read(migrate.ReadProgress{Groups: 2, GroupsTotal: 4, Offsets: 20000})
	for _, want := range []string{"(2/4", "20,000 offsets, 9,995 offsets/s"} {
		if !strings.Contains(on.String(), want) {
			t.Errorf("bar lacks %q: %q", want, on.String())
		}
	}
	clock.advance(time.Millisecond) // throttled, but the last step is always drawn
	read(migrate.ReadProgress{Groups: 4, GroupsTotal: 4, Offsets: 40000})
	if !strings.Contains(on.String(), "40,000 offsets") {
		t.Errorf("the last step is not drawn: %q", on.String())
	}
	on.Reset()
	clock.advance(100 * time.Millisecond)
	p.done(&deps{}, "plan: 40,000 offsets in 4 groups read in "+p.elapsed())
	if got := on.String(); !strings.HasSuffix(got, "plan: 40,000 offsets in 4 groups read in 2.1 s\n") {
		t.Errorf("closing line: %q", got)
	}
}

// The closing line is on stderr after every plan; off a terminal it is an info log.
func TestClosingLines(t *testing.T) {
	_, errOut, _ := run(t, manyGroups(300), "migrate", "plan", "-o", "json")
	if !strings.Contains(errOut, "plan: 1,200 offsets in 300 groups read in ") || !strings.Contains(errOut, "420 write, 240 skip, 540 block") {
		t.Errorf("plan's closing line missing:\n%s", errOut)
	}
	_, errOut, _ = run(t, fixture(), "migrate", "copy")
	if !strings.Contains(errOut, "copy (dry run): 2 offsets in 2 groups would be written, 0 already equal, 0 blocked at re-check; checked in ") {
		t.Errorf("copy's closing line missing:\n%s", errOut)
	}
	_, errOut, _ = run(t, fixture(), "migrate", "verify")
	if !strings.Contains(errOut, "verify: 3 offsets in 2 groups compared in ") {
		t.Errorf("verify's closing line missing:\n%s", errOut)
	}
}

// On a terminal, copy's bar is there from the start: its fresh plan's read of ZooKeeper is a
// phase before the writes; the closing line is plain, after both.
func TestCopyProgressFromTheStart(t *testing.T) {
	var out, errb bytes.Buffer
	d := defaultDeps(&out, &errb)
	d.stores = fixture()
	d.terminal = func() bool { return true }
	root := newRootCmd(d, &globalOptions{})
	root.SetArgs([]string{"migrate", "copy"})
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := errb.String()
	read := strings.Index(got, "copy: planning: reading ZooKeeper (groups)")
	check := strings.Index(got, "copy (dry run): checking")
	closing := strings.Index(got, "copy (dry run): 2 offsets in 2 groups would be written")
	if read < 0 || check < read || closing < check {
		t.Errorf("want the read's bar, then the writes' bar, then the closing line; stderr:\n%q", got)
	}
	if strings.Contains(got, "level=INFO msg=\"copy (dry run)") {
		t.Errorf("on a terminal the closing line is plain, not a log:\n%q", got)
	}
}
