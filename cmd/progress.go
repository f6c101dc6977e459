package cmd

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a progress bar on stderr, shown only when stderr is a terminal and the output is
// for people: CI logs and JSON consumers get no carriage-return noise.
type progress struct{ bar *progressbar.ProgressBar }

func newProgress(d *deps, forPeople bool, total int, what string) *progress {
	f, ok := d.stderr.(*os.File)
	if !forPeople || !ok || total == 0 || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("offsets"),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) set(done int) {
	// A bar that cannot draw must not fail the copy: it just stops drawing.
	if p.bar != nil && p.bar.Set(done) != nil {
		p.bar = nil
	}
}

func (p *progress) finish() {
	if p.bar != nil && p.bar.Finish() != nil {
		p.bar = nil
	}
}
