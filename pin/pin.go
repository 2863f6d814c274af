// Package pin places processes on CPUs: the Redis servers lockbench starts on some CPUs, and
// lockbench itself, with the generator processes it forks, on others.
//
// On one machine a Redis server and the client that drives it compete for the same cores; the
// scheduler then decides as much of a throughput figure as the lock library does, and the CPU
// each side spends per acquisition is smeared by migrations and cache misses. Placing them on
// disjoint CPUs makes the figures repeatable and lets the server's CPU per acquisition stand for
// what one Redis core can do.
package pin

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrUnsupported is returned where the operating system offers no CPU affinity lockbench can
// set (everything but Linux).
var ErrUnsupported = errors.New("pin: CPU placement needs Linux (sched_setaffinity)")

// ErrBadList wraps every error of Parse.
var ErrBadList = errors.New("bad CPU list")

// maxCPU bounds the CPU numbers Parse accepts, as the kernel's cpu_set_t does.
const maxCPU = 1023

// CPUs is a set of CPU numbers, sorted and without repeats. The zero value is the empty set,
// which means "not placed". It is a plain value.
type CPUs []int

// Parse reads a CPU list as taskset and cpuset files write it: numbers and ranges, comma
// separated ("0", "0-3", "1,3,5-7"). Errors wrap ErrBadList.
func Parse(list string) (CPUs, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("%w: empty (want e.g. 0 or 1-3 or 0,2)", ErrBadList)
	}
	var out CPUs
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := cpuNumber(lo, list)
		if err != nil {
			return nil, err
		}
		to := from
		if isRange {
			if to, err = cpuNumber(hi, list); err != nil {
				return nil, err
			}
			if to < from {
				return nil, fmt.Errorf("%w %q: range %s runs backwards", ErrBadList, list, part)
			}
		}
		for c := from; c <= to; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func cpuNumber(s, list string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > maxCPU {
		return 0, fmt.Errorf("%w %q: %q is not a CPU number (0 to %d)", ErrBadList, list, s, maxCPU)
	}
	return n, nil
}

// String writes c as Parse reads it, with ranges folded: "0-3,6". The empty set is "".
func (c CPUs) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Intersect returns the CPUs in both c and o.
func (c CPUs) Intersect(o CPUs) CPUs {
	var out CPUs
	for _, x := range c {
		if slices.Contains(o, x) {
			out = append(out, x)
		}
	}
	return out
}

// Missing returns the CPUs of c that are not in avail: CPUs that do not exist on this machine,
// or that this process may not use.
func (c CPUs) Missing(avail CPUs) CPUs {
	var out CPUs
	for _, x := range c {
		if !slices.Contains(avail, x) {
			out = append(out, x)
		}
	}
	return out
}

// Split divides avail between servers and a client for benchmarking on one machine: the
// servers get one CPU per server process that does the work (the masters: Redis runs commands
// on one thread), but never more than half, and the client the rest, the servers taking the
// highest-numbered CPUs (CPU 0 takes most interrupts on many machines, which the client
// tolerates better than a saturated server). With fewer than two CPUs there is nothing to split
// and ok is false.
func Split(avail CPUs, masters int) (server, client CPUs, ok bool) {
	if len(avail) < 2 {
		return nil, nil, false
	}
	n := min(max(masters, 1), len(avail)/2)
	cut := len(avail) - n
	return slices.Clone(avail[cut:]), slices.Clone(avail[:cut]), true
}
