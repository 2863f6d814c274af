// Package progress shows what lockbench is doing to the person running it: log lines, and the
// run under way as a self-updating line on a terminal. Its UI is the bench.Reporter of the
// lockbench command's run, sweep and worker; a Go program may use it the same way.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/lockbench/lockbench/workloads"
)

// clearLine returns to the start of a terminal's line and erases it.
const clearLine = "\r\033[K"

// UI writes logs and progress to w (lockbench's stderr): a self-updating line on a terminal,
// plain lines otherwise (CI logs get phase lines only, not a line a second). It implements
// bench.Reporter. Safe for concurrent use.
type UI struct {
	mu            sync.Mutex
	w             io.Writer
	tty           bool
	dirty         bool // a progress line is on screen and must be cleared before other output
	round, rounds int  // shown when the drivers run more than once (--repeat)
	// prefix, if set, starts the progress line (a sweep's step and time left).
	prefix func() string
}

// New returns the UI that writes to w; it updates a progress line in place only when w is a
// terminal (an *os.File on a character device).
func New(w io.Writer) *UI {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &UI{w: w, tty: tty}
}

// Line writes a log line, fmt.Sprintf style, after clearing the progress line if one is shown.
func (u *UI) Line(format string, a ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLocked()
	fmt.Fprintf(u.w, format+"\n", a...)
}

// Progress shows the run under way, on a terminal only: the prefix, the round (when there are
// several), the driver, phase, time and acquisitions so far with their rate.
func (u *UI) Progress(p workloads.Progress) {
	if !u.tty {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Acquisitions) / s
	}
	fmt.Fprint(u.w, clearLine)
	if u.prefix != nil {
		fmt.Fprint(u.w, u.prefix()+"  ")
	}
	if u.rounds > 1 {
		fmt.Fprintf(u.w, "round %d/%d ", u.round, u.rounds)
	}
	fmt.Fprintf(u.w, "%s %s %4.0fs/%.0fs  %d acquisitions  %.0f/s", p.Driver, p.Phase, p.Elapsed.Seconds(), p.Planned.Seconds(), p.Acquisitions, rate)
	u.dirty = true
}

// SetRound sets the round the progress line shows.
func (u *UI) SetRound(round, rounds int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.round, u.rounds = round, rounds
}

// SetPrefix makes prefix start every progress line from now on (nil: none). prefix is called
// with the UI's lock held, so it must not call the UI's methods.
func (u *UI) SetPrefix(prefix func() string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.prefix = prefix
}

// Clear clears the progress line, if one is shown.
func (u *UI) Clear() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLocked()
}

func (u *UI) clearLocked() {
	if u.dirty {
		fmt.Fprint(u.w, clearLine)
		u.dirty = false
	}
}
