//go:build linux

package pin

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Available returns the CPUs this process may run on (its affinity mask), which is what a list
// given to Self or Start must come from.
func Available() (CPUs, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("pin: sched_getaffinity: %w", err)
	}
	return fromSet(&set), nil
}

func fromSet(set *unix.CPUSet) CPUs {
	var out CPUs
	for c := 0; c <= maxCPU; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

func toSet(c CPUs) *unix.CPUSet {
	var set unix.CPUSet
	for _, x := range c {
		set.Set(x)
	}
	return &set
}

// Self places every thread of this process on c and sets GOMAXPROCS to len(c), so the Go
// scheduler runs no more goroutines at once than it has CPUs. Threads the runtime creates later
// inherit the mask from the thread that creates them, and so do processes this one forks
// (lockbench's generator processes): their runtime sizes GOMAXPROCS from the mask by itself.
// restore puts the earlier mask and GOMAXPROCS back (lockbench's tests run commands in-process).
func Self(c CPUs) (restore func(), err error) {
	if len(c) == 0 {
		return func() {}, nil
	}
	before, err := Available()
	if err != nil {
		return nil, err
	}
	if err := setAllThreads(toSet(c)); err != nil {
		setAllThreads(toSet(before))
		return nil, err
	}
	procs := runtime.GOMAXPROCS(len(c))
	return func() {
		setAllThreads(toSet(before))
		runtime.GOMAXPROCS(procs)
	}, nil
}

// setAllThreads sets the mask of every thread of this process. A thread created while the list
// is walked may have copied the old mask from a thread not yet set, so the walk repeats until a
// pass finds no thread it had not set.
func setAllThreads(set *unix.CPUSet) error {
	done := map[int]bool{}
	for pass := 0; pass < 10; pass++ {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh = true
			if err := unix.SchedSetaffinity(tid, set); err != nil {
				if err == unix.ESRCH { // the thread has exited
					continue
				}
				return fmt.Errorf("pin: sched_setaffinity: %w", err)
			}
			done[tid] = true
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

func threads() ([]int, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("pin: list threads: %w", err)
	}
	tids := make([]int, 0, len(entries))
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// Start calls start, which starts a process, on a thread placed on c, so that the process and
// every thread it makes inherit c from their first instruction on (a mask set on a running
// server afterwards would miss threads it made before, or race with their creation). The
// calling thread gets its mask back before Start returns. With an empty c, start runs as is.
func Start(c CPUs, start func() error) error {
	if len(c) == 0 {
		return start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return fmt.Errorf("pin: sched_getaffinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, toSet(c)); err != nil {
		return fmt.Errorf("pin: place on CPUs %s: %w", c, err)
	}
	err := start()
	if rerr := unix.SchedSetaffinity(0, &before); rerr != nil && err == nil {
		err = fmt.Errorf("pin: restore thread mask: %w", rerr)
	}
	return err
}

// Of returns the CPUs process pid may run on.
func Of(pid int) (CPUs, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("pin: sched_getaffinity %d: %w", pid, err)
	}
	return fromSet(&set), nil
}
