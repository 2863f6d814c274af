package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/extdriver/adapter"
	"github.com/lockbench/lockbench/internal/testparallel"
)

// TestMain lets the test binary stand in for lockbench in subprocess tests (signals, exit codes),
// and for the null adapter built into lockbench ("exec:null" with no command), as main does: so
// in-process tests parse and run exec:null as the binary would.
func TestMain(m *testing.M) {
	if code, served := adapter.ServeBuiltin(os.Args[1:]); served {
		os.Exit(code)
	}
	if os.Getenv("LOCKBENCH_TEST_MAIN") == "1" {
		main()
		return
	}
	// The parallel tests run 3 at a time rather than go test's GOMAXPROCS (2 in CI): most are a
	// lockbench subprocess on servers of its own, waiting on its fixed-length phases, server
	// starts and fail-overs more than computing (the package used 0.7-0.8 CPU on average either
	// way). Those that hold a figure to a bound a neighbour's load would move stay serial.
	testparallel.Default(3)
	os.Exit(m.Run())
}

func TestDispatchAndBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{nil, exitUsage, "Usage"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"help"}, exitOK, "lockbench run"},
		{[]string{"version"}, exitOK, "lockbench"},
		{[]string{"run", "--help"}, exitOK, "Examples"},
		{[]string{"help", "run"}, exitOK, "--concurrency"},
		{[]string{"run", "--concurrency", "lots"}, exitUsage, "invalid argument"},
		{[]string{"run", "--concurrency", "0"}, exitUsage, "--concurrency 0"},
		{[]string{"run", "--rate", "0"}, exitUsage, "--rate 0: want a positive rate"},
		{[]string{"run", "--rate", "fast"}, exitUsage, "invalid argument"},
		{[]string{"run", "--arrival", "poisson"}, exitUsage, "--arrival poisson needs --rate"},
		{[]string{"run", "--keys", "-3"}, exitUsage, "--keys -3"},
		{[]string{"run", "--no-such-flag"}, exitUsage, "unknown flag"},
		{[]string{"run", "--driver", "nope"}, exitUsage, `unknown driver "nope"`},
		{[]string{"run", "--driver", ""}, exitUsage, "at least one driver"},
		{[]string{"run", "--driver", "lockcore:handoff=-1"}, exitUsage, "handoff=-1: want a whole number, 0 or more"},
		{[]string{"run", "--driver", "lockcore:handof=1"}, exitUsage, `no option "handof"; lockcore takes handoff, handoff_window, yield, queue`},
		{[]string{"run", "--driver", "lockcore:handoff"}, exitUsage, "not key=value"},
		{[]string{"run", "--driver", "lockcore:queue=maybe"}, exitUsage, "want on or off"},
		{[]string{"run", "--driver", "lockcore:handoff=1:handoff=2"}, exitUsage, "given twice"},
		{[]string{"run", "--driver", "naive:handoff=0"}, exitUsage, `driver naive has no option "handoff"; naive takes retries`},
		{[]string{"run", "--driver", "lockcore-fair:handoff=0"}, exitUsage, "lockcore-fair takes sync"},
		{[]string{"run", "--driver", "redsync:retries=0"}, exitUsage, `driver redsync has no option "retries"; redsync takes lease`},
		{[]string{"run", "--driver", "lockcore:handoff_window=0s"}, exitUsage, "must be positive"},
		{[]string{"run", "--driver", "lockcore:watchdog=40ms:handoff_window=20ms"}, exitUsage, "at most a quarter of the watchdog lease"},
		{[]string{"run", "--driver", "lockcore:yield=soon"}, exitUsage, "yield=soon: want a duration with a unit"},
		{[]string{"run", "--workload", "nope"}, exitUsage, `unknown workload "nope"`},
		{[]string{"run", "--key-dist", "gauss"}, exitUsage, "key distribution"},
		{[]string{"run", "--key-dist", "zipf", "--zipf-s", "0.5"}, exitUsage, "zipf exponent"},
		{[]string{"run", "--duration", "-1s"}, exitUsage, "--duration -1s"},
		{[]string{"run", "--duration", "0s"}, exitUsage, "--duration 0s"},
		{[]string{"run", "--duration", "ten"}, exitUsage, "invalid argument"},
		{[]string{"run", "--hold", "-1ms"}, exitUsage, "hold -1ms"},
		{[]string{"run", "--warmup", "-1s"}, exitUsage, "--warmup"},
		{[]string{"run", "--lease", "-1s"}, exitUsage, "--lease"},
		{[]string{"run", "--addr", "localhost"}, exitUsage, "want host:port"},
		{[]string{"run", "--key-prefix", " "}, exitUsage, "--key-prefix"},
		{[]string{"run", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"run", "--threshold", "p98<5ms"}, exitUsage, `--threshold: "p98<5ms": unknown metric "p98"`},
		{[]string{"run", "--threshold", "p99<5"}, exitUsage, "a latency needs its unit"},
		{[]string{"run", "--threshold", "throughput"}, exitUsage, "no operator"},
		{[]string{"run", "--threshold", "lockcore/redsync throughput>=1"}, exitUsage, "names driver redsync, which is not in --driver naive,lockcore"},
		{[]string{"compare", "a"}, exitUsage, "want two arguments"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		all := out.String() + errb.String()
		if code != tc.code || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, tc.code, tc.out)
		}
	}
}
