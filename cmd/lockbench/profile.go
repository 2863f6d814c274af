package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// profile starts the profiles f asks for (--cpuprofile, --trace) for lockbench command cmd. When
// one cannot start it says so on stderr and returns false: a usage error, found before any
// measuring.
func profile(cmd string, f *runFlags, stderr io.Writer) (stop func(), ok bool) {
	if f.cpuprof == "" && f.tracefile == "" {
		return func() {}, true
	}
	stop, err := startProfiles(f.cpuprof, f.tracefile)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
		return nil, false
	}
	return stop, true
}

// startProfiles profiles lockbench itself, to find where client-side time goes: a CPU profile
// to cpuPath (pprof) and a Go execution trace to tracePath (go tool trace), each when its path
// is not empty. The trace shows what a CPU profile cannot: how long goroutines wait to be run
// once readied, and when the process sleeps in the network poller. The error names the flag.
func startProfiles(cpuPath, tracePath string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			stop()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	return stop, nil
}
