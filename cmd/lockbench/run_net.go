package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/netem"
	"github.com/spf13/pflag"
)

// netFlag is --net: network conditions between the clients and Redis (see package netem).
type netFlag struct {
	spec string
	cond *netem.Conditions // nil: clients dial Redis directly
}

func (n *netFlag) add(fs *pflag.FlagSet) {
	fs.StringVar(&n.spec, "net", "", "put network conditions between every client connection and Redis, through in-process proxies lockbench starts (toxiproxy): "+netem.Grammar+
		"; works on started and attached (--addr) deployments; lockbench's own INFO and cleanup connections go direct")
}

// check parses --net if it was given, and returns the message for a bad spec, or "".
func (n *netFlag) check(fs *pflag.FlagSet) string {
	if !fs.Changed("net") {
		return ""
	}
	c, err := netem.Parse(n.spec)
	if err != nil {
		return "--net: " + strings.TrimPrefix(err.Error(), netem.ErrSpec.Error()+": ")
	}
	n.cond = &c
	return ""
}

// String is the conditions as results record them ("latency=1ms"), or "" without --net.
func (n *netFlag) String() string {
	if n.cond == nil {
		return ""
	}
	return n.cond.String()
}

// checkProcNets parses run's --net-proc into ff.procNet, and returns the message for a bad one,
// or "".
func checkProcNets(ff *fleetFlags) string {
	if len(ff.procNets) == 0 {
		return ""
	}
	if ff.procs < 2 {
		return "--net-proc gives one of several generator processes its own network conditions: give --procs 2 or more"
	}
	ff.procNet = make(map[int]netem.Conditions, len(ff.procNets))
	for _, v := range ff.procNets {
		idx, spec, ok := strings.Cut(v, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return fmt.Sprintf("--net-proc %q: want INDEX:SPEC, e.g. 1:latency=5ms", v)
		}
		if i < 0 || i >= ff.procs {
			return fmt.Sprintf("--net-proc %q: process %d, want 0 to %d (--procs %d)", v, i, ff.procs-1, ff.procs)
		}
		if _, dup := ff.procNet[i]; dup {
			return fmt.Sprintf("--net-proc: process %d given twice", i)
		}
		c, err := netem.Parse(spec)
		if err != nil {
			return fmt.Sprintf("--net-proc %q: %s", v, strings.TrimPrefix(err.Error(), netem.ErrSpec.Error()+": "))
		}
		ff.procNet[i] = c
	}
	return ""
}

// netOfProc is the conditions generator process i puts on its connections: its --net-proc, else
// --net; "" for none.
func netOfProc(f *runFlags, i int) string {
	if c, ok := f.fleet.procNet[i]; ok {
		return c.String()
	}
	return f.net.String()
}

// netOfFleet is the network conditions of a run as its result records them (results.Run.Net):
// --net alone, or with --net-proc every process's, "0: none; 1: latency=5ms".
func netOfFleet(f *runFlags) string {
	if len(f.fleet.procNet) == 0 {
		return f.net.String()
	}
	parts := make([]string, f.fleet.procs)
	for i := range parts {
		n := netOfProc(f, i)
		if n == "" {
			n = "none"
		}
		parts[i] = fmt.Sprintf("%d: %s", i, n)
	}
	return strings.Join(parts, "; ")
}
