package main

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/internal/profiling"
)

// profile starts the profiles f asks for (--cpuprofile, --trace) for lockbench command cmd. When
// one cannot start it says so on stderr and returns false: a usage error, found before any
// measuring.
func profile(cmd string, f *runFlags, stderr io.Writer) (stop func(), ok bool) {
	if f.cpuprof == "" && f.tracefile == "" {
		return func() {}, true
	}
	stop, err := profiling.Start(f.cpuprof, f.tracefile)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
		return nil, false
	}
	return stop, true
}
