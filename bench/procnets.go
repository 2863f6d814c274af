package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/netem"
)

// ProcNets reads lockbench run's --net-proc values, each INDEX:SPEC (SPEC as netem.Parse takes
// it), for a run of procs generator processes whose own conditions are net (--net, "" for none).
// It returns the conditions of every process (Fleet.Nets: its own, else net), nil without
// specs, and those of the run as its result records them (Spec.Net): net alone without specs,
// else every process's, "0: none; 1: latency=5ms". The error wraps ErrBadSpec and names
// --net-proc.
func ProcNets(specs []string, procs int, net string) (nets []string, runNet string, err error) {
	if len(specs) == 0 {
		return nil, net, nil
	}
	if procs < 2 {
		return nil, "", bad("--net-proc gives one of several generator processes its own network conditions: give --procs 2 or more")
	}
	own := make(map[int]netem.Conditions, len(specs))
	for _, v := range specs {
		idx, spec, ok := strings.Cut(v, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return nil, "", bad("--net-proc %q: want INDEX:SPEC, e.g. 1:latency=5ms", v)
		}
		if i < 0 || i >= procs {
			return nil, "", bad("--net-proc %q: process %d, want 0 to %d (--procs %d)", v, i, procs-1, procs)
		}
		if _, dup := own[i]; dup {
			return nil, "", bad("--net-proc: process %d given twice", i)
		}
		c, err := netem.Parse(spec)
		if err != nil {
			return nil, "", bad("--net-proc %q: %s", v, strings.TrimPrefix(err.Error(), netem.ErrSpec.Error()+": "))
		}
		own[i] = c
	}
	nets = make([]string, procs)
	parts := make([]string, procs)
	for i := range nets {
		nets[i] = net
		if c, ok := own[i]; ok {
			nets[i] = c.String()
		}
		n := nets[i]
		if n == "" {
			n = "none"
		}
		parts[i] = fmt.Sprintf("%d: %s", i, n)
	}
	return nets, strings.Join(parts, "; "), nil
}

// SlotIndex is the index of a worker whose orchestrator numbers its tasks from 1 in the
// environment variable env (Docker Swarm expands {{.Task.Slot}} in a service's environment, not
// in its command), which holds value: the slot less 1. The error wraps ErrBadSpec and names
// --task-slot-env.
func SlotIndex(env, value string, procs int) (int, error) {
	slot, err := strconv.Atoi(value)
	if err != nil || slot < 1 || slot > procs {
		return 0, bad("--task-slot-env %s: the variable holds %q; want a task slot, 1 to %d (--procs %d)", env, value, procs, procs)
	}
	return slot - 1, nil
}

// ParseStalls reads a worker's --stall values, each AT+FOR from the start of the measured
// phase, for process index (what lockbench run --fault stall:genN@AT+FOR gives process N-1).
// The error wraps ErrBadSpec and names --stall.
func ParseStalls(texts []string, index int) ([]Stall, error) {
	var stalls []Stall
	for _, v := range texts {
		flt, err := faults.Parse(fmt.Sprintf("%s:%s%d@%s", faults.Stall, faults.RoleGen, index+1, v))
		if err != nil {
			return nil, bad("--stall %q: want AT+FOR, e.g. 3s+2s: %v", v, err)
		}
		stalls = append(stalls, Stall{At: flt.At, For: flt.For})
	}
	return stalls, nil
}
