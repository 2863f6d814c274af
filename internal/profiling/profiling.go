// Package profiling profiles the lockbench process itself, to find where client-side time goes
// (lockbench run's --cpuprofile and --trace). Profiles are process-wide: one of each at a time.
package profiling

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// Start writes a CPU profile to cpuPath (pprof) and a Go execution trace to tracePath (go tool
// trace), each when its path is not empty, until stop is called. The trace shows what a CPU
// profile cannot: how long goroutines wait to be run once readied, and when the process sleeps
// in the network poller. The error names the flag (--cpuprofile, --trace); after an error
// nothing is left running.
func Start(cpuPath, tracePath string) (stop func(), err error) {
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
