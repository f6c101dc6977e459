package cmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/zk2kafka/zk2kafka/migrate"
)

// progress draws one line on stderr while a command reads or writes, only when stderr is a
// terminal and the output is for people: CI logs and JSON consumers get no carriage-return
// noise. Each phase (a read of ZooKeeper, the writes) gets a bar over its total; the rate is
// ours (rateMeter): the bar library's divided its first update by the microseconds since the
// bar was drawn, and a copy once showed 1,644,821,383 offsets/s.
type progress struct {
	w     io.Writer // nil: nothing is drawn
	now   func() time.Time
	start time.Time // the command's start, for the closing line

	bar   *progressbar.ProgressBar
	what  string
	unit  string
	total int
	meter rateMeter
	drawn time.Time // the last draw
}

// drawEvery bounds how often the line is drawn: more often only costs the terminal.
const drawEvery = 100 * time.Millisecond

func newProgress(d *deps, forPeople bool) *progress {
	isTerm := d.terminal
	if isTerm == nil {
		isTerm = func() bool {
			f, ok := d.stderr.(*os.File)
			return ok && term.IsTerminal(int(f.Fd()))
		}
	}
	return newProgressOn(d.stderr, forPeople && isTerm(), time.Now)
}

// newProgressOn draws on w when terminal is true; now is the clock (tests give their own).
func newProgressOn(w io.Writer, terminal bool, now func() time.Time) *progress {
	p := &progress{now: now, start: now()}
	if terminal {
		p.w = w
	}
	return p
}

// phase ends the current bar and starts one for what, over total units (the rate counts unit).
// A phase with nothing to do draws nothing.
func (p *progress) phase(what string, total int, unit string) {
	p.finish()
	p.what, p.unit, p.total = what, unit, total
	p.meter = rateMeter{}
	p.meter.add(p.now(), 0)
	if p.w == nil || total <= 0 {
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true), // the bar is there from the phase's start
	)
	p.drawn = p.now()
}

// update moves the bar to done of the phase's total; count is what the rate is of (offsets).
// It draws at most every drawEvery, and always the last step.
func (p *progress) update(done, count int) {
	if p.bar == nil {
		return
	}
	now := p.now()
	if now.Sub(p.drawn) < drawEvery && done < p.total {
		return
	}
	p.drawn = now
	desc := fmt.Sprintf("%s, %s %s", p.what, thousands(int64(count)), p.unit)
	if r, ok := p.meter.add(now, count); ok {
		desc += fmt.Sprintf(", %s %s/s", thousands(int64(r+0.5)), p.unit)
	}
	p.bar.Describe(desc)
	// A bar that cannot draw must not fail the command: it just stops drawing.
	if p.bar.Set(done) != nil {
		p.bar = nil
	}
}

// set is update for a phase whose done and count are the same (copy's writes).
func (p *progress) set(done int) { p.update(done, done) }

// reads returns the migrate.ReadProgressFunc of a read of ZooKeeper: a phase of its own, a bar
// over the groups, the rate in offsets per second.
func (p *progress) reads(what string) migrate.ReadProgressFunc {
	return func(r migrate.ReadProgress) {
		if r.Groups == 0 {
			p.phase(what+" (groups)", r.GroupsTotal, "offsets")
			return
		}
		p.update(r.Groups, r.Offsets)
	}
}

// pause clears the bar's line before the command writes its results to a terminal too; the
// next update draws it again.
func (p *progress) pause() {
	if p.bar != nil && p.bar.Clear() != nil {
		p.bar = nil
	}
}

// finish removes the bar.
func (p *progress) finish() {
	if p.bar != nil && p.bar.Finish() != nil {
		p.bar = nil
	}
	p.bar = nil
}

// elapsed is the time since the command started, as "9.1 s".
func (p *progress) elapsed() string {
	return fmt.Sprintf("%.1f s", p.now().Sub(p.start).Seconds())
}

// done ends the bar and says the command's closing line on stderr: as a plain line on a
// terminal, as an info log otherwise (a JSON log stays JSON).
func (p *progress) done(d *deps, line string) {
	p.finish()
	if p.w != nil {
		fmt.Fprintln(p.w, line)
		return
	}
	if d.logger != nil {
		d.logger.Info(line)
	}
}

// rateMeter is a rate over the last rateWindow of samples. It gives none until minRateSpan
// has passed since its first sample: a rate over a near-zero interval is noise.
type rateMeter struct {
	samples []rateSample // oldest first
}

type rateSample struct {
	at time.Time
	n  int
}

const (
	rateWindow  = 5 * time.Second
	minRateSpan = time.Second
)

// add records n done at time at and returns the rate per second over the window, if one can
// be told yet. A count that went backwards starts the meter again.
func (m *rateMeter) add(at time.Time, n int) (float64, bool) {
	if k := len(m.samples); k > 0 && (n < m.samples[k-1].n || at.Before(m.samples[k-1].at)) {
		m.samples = m.samples[:0]
	}
	m.samples = append(m.samples, rateSample{at, n})
	// Keep the newest sample at or before the window's start as the base, drop the older ones.
	cut := at.Add(-rateWindow)
	for len(m.samples) > 2 && !m.samples[1].at.After(cut) {
		m.samples = m.samples[1:]
	}
	first := m.samples[0]
	span := at.Sub(first.at)
	if span < minRateSpan {
		return 0, false
	}
	return float64(n-first.n) / span.Seconds(), true
}
