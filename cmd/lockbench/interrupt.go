package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/lockbench/lockbench/progress"
)

// interrupter is the one signal handler of lockbench's long commands (run, sweep, worker, up):
// the first Ctrl-C (or SIGTERM) becomes a cancelled context, so the work in progress ends and
// what was measured is written; a second exits at once (exitInterrupted) after the hard stop
// (stopping the topology lockbench started, say). Safe for concurrent use.
type interrupter struct {
	sigs     chan os.Signal
	done     chan struct{}
	mu       sync.Mutex
	hardStop func()
}

// catchInterrupts starts watching for signals: the first is announced with first(sig) and
// cancels; call release when done.
func catchInterrupts(first func(os.Signal), cancel context.CancelFunc) *interrupter {
	in := &interrupter{sigs: make(chan os.Signal, 2), done: make(chan struct{}), hardStop: func() {}}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-in.sigs:
			first(sig)
			cancel()
		case <-in.done:
			return
		}
		select {
		case <-in.sigs:
			in.mu.Lock()
			in.hardStop()
			os.Exit(exitInterrupted)
		case <-in.done:
		}
	}()
	return in
}

// interruptedLine is the first signal's line of run, sweep and worker on ui; again says what a
// second signal does.
func interruptedLine(ui *progress.UI, again string) func(os.Signal) {
	return func(os.Signal) {
		ui.Line("interrupted: stopping, writing what was measured (%s)", again)
	}
}

// onHardStop sets what a second signal stops before exiting.
func (in *interrupter) onHardStop(f func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.hardStop = f
}

// release stops watching for signals.
func (in *interrupter) release() {
	signal.Stop(in.sigs)
	close(in.done)
}
