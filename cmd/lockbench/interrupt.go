package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupter turns the first Ctrl-C (or SIGTERM) into a cancelled context, so the work in
// progress ends and what was measured is written, and a second into an immediate exit after
// stopping the topology lockbench started. Safe for concurrent use.
type interrupter struct {
	sigs     chan os.Signal
	mu       sync.Mutex
	hardStop func()
}

// catchInterrupts starts watching for signals; call release when done.
func catchInterrupts(ui *progressUI, cancel context.CancelFunc) *interrupter {
	in := &interrupter{sigs: make(chan os.Signal, 2), hardStop: func() {}}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-in.sigs; !ok {
			return
		}
		ui.line("interrupted: stopping, writing what was measured (Ctrl-C again to quit at once)")
		cancel()
		if _, ok := <-in.sigs; ok {
			in.mu.Lock()
			in.hardStop()
			os.Exit(exitInterrupted)
		}
	}()
	return in
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
}
