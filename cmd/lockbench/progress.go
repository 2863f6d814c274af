package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/workloads"
)

// progressUI writes logs and progress to stderr: a self-updating line on a terminal, plain
// lines otherwise (CI logs get phase lines only, not a line a second). Safe for concurrent use.
type progressUI struct {
	mu            sync.Mutex
	w             io.Writer
	tty           bool
	dirty         bool // a progress line is on screen and must be cleared before other output
	round, rounds int  // shown when the drivers run more than once (--repeat)
	// prefix, if set, starts the progress line (a sweep's step and time left); it must not
	// call the progressUI's methods.
	prefix func() string
}

func newProgressUI(w io.Writer) *progressUI {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progressUI{w: w, tty: tty}
}

func (u *progressUI) line(format string, a ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLocked()
	fmt.Fprintf(u.w, format+"\n", a...)
}

func (u *progressUI) progress(p workloads.Progress) {
	if !u.tty {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Acquisitions) / s
	}
	fmt.Fprint(u.w, "\r\033[K")
	if u.prefix != nil {
		fmt.Fprint(u.w, u.prefix()+"  ")
	}
	if u.rounds > 1 {
		fmt.Fprintf(u.w, "round %d/%d ", u.round, u.rounds)
	}
	fmt.Fprintf(u.w, "%s %s %4.0fs/%.0fs  %d acquisitions  %.0f/s", p.Driver, p.Phase, p.Elapsed.Seconds(), p.Planned.Seconds(), p.Acquisitions, rate)
	u.dirty = true
}

// setRound sets the round the progress line shows.
func (u *progressUI) setRound(round, rounds int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.round, u.rounds = round, rounds
}

func (u *progressUI) clear() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLocked()
}

func (u *progressUI) clearLocked() {
	if u.dirty {
		fmt.Fprint(u.w, "\r\033[K")
		u.dirty = false
	}
}

// progressUI is the Reporter of the bench sessions of run and sweep.
var _ bench.Reporter = (*progressUI)(nil)

// Line writes a log line (bench.Reporter).
func (u *progressUI) Line(format string, a ...any) { u.line(format, a...) }

// Progress shows the run under way (bench.Reporter).
func (u *progressUI) Progress(p workloads.Progress) { u.progress(p) }

// SetRound sets the round the progress line shows (bench.Reporter).
func (u *progressUI) SetRound(round, rounds int) { u.setRound(round, rounds) }

// Clear clears the progress line (bench.Reporter).
func (u *progressUI) Clear() { u.clear() }
