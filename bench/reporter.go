package bench

import "github.com/lockbench/lockbench/workloads"

// Reporter shows a session's progress to a person: log lines (a run's start, a skip, why a run
// failed) and the per-second progress of the run under way. lockbench's progress UI is one; a Go
// test may log the lines with t.Logf. Its methods are called from several goroutines and must
// be safe for concurrent use.
type Reporter interface {
	// Line reports one log line, fmt.Sprintf style, without a trailing newline.
	Line(format string, a ...any)
	// Progress reports the run under way, about once a second.
	Progress(p workloads.Progress)
	// SetRound says which round of how many the runs that follow belong to.
	SetRound(round, rounds int)
	// Clear ends the progress of a run that is done, before its outcome's lines.
	Clear()
}

// Discard is a Reporter that shows nothing.
var Discard Reporter = discard{}

type discard struct{}

func (discard) Line(string, ...any)         {}
func (discard) Progress(workloads.Progress) {}
func (discard) SetRound(int, int)           {}
func (discard) Clear()                      {}
