package rediscpu

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// The environment of the experiment tests (lockcore and drivers, TestRedisCPU*):
//
//	LOCKBENCH_REDISCPU       callgrind (instructions) or cpu (native CPU time); unset: skip
//	LOCKBENCH_REDISCPU_N     units per experiment, a multiple of 64 (default 2048)
//	LOCKBENCH_REDISCPU_KEEP  set: keep the callgrind dumps, for callgrind_annotate
const (
	EnvMode  = "LOCKBENCH_REDISCPU"
	EnvUnits = "LOCKBENCH_REDISCPU_N"
	EnvKeep  = "LOCKBENCH_REDISCPU_KEEP"
)

// Env is a started experiment server with its connection, mode and units per experiment.
type Env struct {
	*Server
	Conn  *Conn
	Mode  string
	Units int
}

// StartFromEnv starts the server the environment asks for, closed when tb ends, or skips tb when
// LOCKBENCH_REDISCPU is unset.
func StartFromEnv(tb testing.TB) *Env {
	tb.Helper()
	mode := os.Getenv(EnvMode)
	if mode == "" {
		tb.Skip(EnvMode + "=callgrind|cpu runs the Redis CPU experiments")
	}
	n := 2048
	if v := os.Getenv(EnvUnits); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 64 || n%64 != 0 {
			tb.Fatalf("%s=%q: want a multiple of 64", EnvUnits, v)
		}
	}
	keep := os.Getenv(EnvKeep) != ""
	s, err := Start(context.Background(), mode, keep)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
		if keep {
			tb.Logf("callgrind dumps kept in %s", s.Dir)
		}
	})
	c, err := Dial(s.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	if mode == ModeCallgrind {
		tb.Logf("idle server, serverCron left out: %.0f instructions/s", s.Idle())
	}
	return &Env{Server: s, Conn: c, Mode: mode, Units: n}
}

// RunAll runs the experiments in order, failing tb on the first error, and prints their table
// on stdout.
func (e *Env) RunAll(tb testing.TB, es []Experiment) []Result {
	tb.Helper()
	var rs []Result
	for _, x := range es {
		r, err := e.Run(e.Conn, x)
		if err != nil {
			tb.Fatal(err)
		}
		if e.Mode == ModeCallgrind {
			if r.PerUnit() <= 0 {
				tb.Errorf("%s: %.0f instructions per %s: nothing counted", x.Name, r.PerUnit(), x.Unit)
			}
			tb.Logf("%s, depth %d: %.0f instructions per %s, at most %.0f of them idle (%s)", x.Name, x.Depth,
				r.PerUnit(), x.Unit, e.Idle()*r.Elapsed.Seconds()/float64(x.Units), r.Dump)
		}
		rs = append(rs, r)
	}
	WriteTable(os.Stdout, e.Mode, rs)
	return rs
}
