package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/spf13/pflag"
)

// flagSet registers a group's flags with register on a new flag set and parses args.
func flagSet(t *testing.T, register func(fs *pflag.FlagSet), args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return fs
}

// wantBad fails t unless err is a usage error (ErrBadSpec) containing want, or nil for "".
func wantBad(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v", what, err)
	case want != "" && (err == nil || !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want ErrBadSpec containing %q", what, err, want)
	}
}

// TestExecDriversGetTheReferee: lockbench run with an external driver and no --referee gets a
// native referee; a named referee, a run without exec: drivers and a worker keep theirs.
func TestExecDriversGetTheReferee(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		worker  bool
		addr    string
		drivers []string
		want    string
	}{
		{false, "", []string{"lockcore", "exec:null=/bin/null-adapter"}, NativeReferee},
		{false, "127.0.0.1:7777", []string{"exec:null=/bin/null-adapter"}, "127.0.0.1:7777"},
		{false, "", []string{"lockcore", "naive"}, ""},
		{true, "", []string{"exec:null=/bin/null-adapter"}, ""},
		{false, RefereeOff, []string{"exec:null=/bin/null-adapter"}, ""},
	} {
		g := RefereeFlags{Addr: tc.addr}
		if err := g.Default(tc.worker, tc.drivers); err != nil || g.Addr != tc.want {
			t.Errorf("worker %v %v with --referee %q: referee %q (%v), want %q", tc.worker, tc.drivers, tc.addr, g.Addr, err, tc.want)
		}
	}
	g := RefereeFlags{Addr: RefereeOff}
	if err := g.Default(true, nil); err == nil {
		t.Error("a worker's --referee off accepted")
	}
}

// TestRefereeFlags: --referee and --resource as run and a worker take them: the resource asks
// run for a native referee and refuses --referee off; a worker names its referee.
func TestRefereeFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		worker   bool
		args     []string
		workload string
		want     string // "" for none
		addr     string // after the checks
	}{
		{false, nil, "contention", "", ""},
		{false, []string{"--resource", "fenced"}, "contention", "", NativeReferee},
		{false, []string{"--resource", "fenced", "--referee", "127.0.0.1:7777"}, "contention", "", "127.0.0.1:7777"},
		{false, []string{"--resource", "rusty"}, "contention", `--resource "rusty": want fenced or plain`, ""},
		{false, []string{"--resource", "plain"}, "rw", "--resource is for --workload contention: the holders of rw write nothing to it", ""},
		{false, []string{"--resource", "plain", "--referee", "off"}, "contention", "--resource lives on the referee: not with --referee off", ""},
		{false, []string{"--referee-ca-file", "ca.pem"}, "contention", "--referee-ca-file needs --referee", ""},
		{false, []string{"--referee", "native"}, "contention", "", NativeReferee},
		{true, []string{"--referee", "native"}, "contention", "--referee native: a worker uses the run's referee; give its address", ""},
		{true, []string{"--resource", "plain"}, "contention", "", ""}, // without --referee: WorkerSpec.Validate's
		{false, []string{"--referee", "redis://a b"}, "contention", "--referee: ", ""},
	} {
		var g RefereeFlags
		flagSet(t, func(fs *pflag.FlagSet) { g.Register(fs, tc.worker) }, tc.args...)
		err := g.CheckResource(tc.worker, tc.workload)
		if err == nil {
			err = g.Default(tc.worker, nil)
		}
		if err == nil {
			err = g.Check(tc.worker)
		}
		wantBad(t, strings.Join(tc.args, " "), err, tc.want)
		if tc.want == "" && g.Addr != tc.addr {
			t.Errorf("%q: referee %q, want %q", tc.args, g.Addr, tc.addr)
		}
	}
	g := RefereeFlags{Resource: "fenced"}
	if err := g.CheckResource(false, "contention"); err != nil || !g.ForResource {
		t.Fatalf("--resource without --referee: %v, for the resource %v", err, g.ForResource)
	}
	if s := g.Spec("10.0.0.1", pin.CPUs{1}); s == nil || s.Addr != NativeReferee || s.Resource != "fenced" || !s.ForResource || s.NativeHost != "10.0.0.1" || !slices.Equal(s.NativeCPUs, pin.CPUs{1}) {
		t.Errorf("Spec: %+v", s)
	}
	if s := (&RefereeFlags{}).Spec("", nil); s != nil {
		t.Errorf("Spec without a referee: %+v, want nil", s)
	}
}

// TestFleetFlags: run's --procs and --net-proc, and a worker's slot, start time and stalls.
func TestFleetFlags(t *testing.T) {
	t.Setenv("TASK_SLOT", "3")
	for _, tc := range []struct {
		worker bool
		args   []string
		want   string
	}{
		{false, nil, ""},
		{false, []string{"--procs", "0"}, "--procs 0: want 1 to"},
		{false, []string{"--procs", "2", "--net-proc", "1:latency=5ms"}, ""},
		{false, []string{"--net-proc", "1:latency=5ms"}, "--net-proc gives one of several generator processes"},
		{true, []string{"--procs", "4", "--task-slot-env", "TASK_SLOT"}, ""},
		{true, []string{"--procs", "4", "--task-slot-env", "TASK_SLOT", "--index", "1"}, "give --index or --task-slot-env, not both"},
		{true, []string{"--procs", "2", "--task-slot-env", "TASK_SLOT"}, "--task-slot-env TASK_SLOT: the variable holds \"3\""},
		{true, []string{"--start-at", "noon"}, `--start-at "noon": want an RFC 3339 time`},
		{true, []string{"--start-at", "2026-11-23T12:00:00Z", "--stall", "3s+2s"}, ""},
		{true, []string{"--stall", "soon"}, `--stall "soon"`},
	} {
		ff := FleetFlags{Procs: 1}
		fs := flagSet(t, func(fs *pflag.FlagSet) { ff.Register(fs, tc.worker) }, tc.args...)
		wantBad(t, strings.Join(tc.args, " "), ff.Check(fs, tc.worker, "latency=1ms"), tc.want)
	}
	ff := FleetFlags{}
	fs := flagSet(t, func(fs *pflag.FlagSet) { ff.Register(fs, true) }, "--procs", "4", "--task-slot-env", "TASK_SLOT", "--start-at", "1795435200", "--stall", "3s+2s")
	if err := ff.Check(fs, true, ""); err != nil {
		t.Fatal(err)
	}
	if ff.Index != 2 || !ff.StartAt.Equal(time.Unix(1795435200, 0)) || len(ff.Stalls) != 1 || ff.Clock != ClockRedis {
		t.Errorf("worker: index %d (want 2), start %v, stalls %v, clock %q", ff.Index, ff.StartAt, ff.Stalls, ff.Clock)
	}
	ff = FleetFlags{}
	fs = flagSet(t, func(fs *pflag.FlagSet) { ff.Register(fs, false) }, "--procs", "2", "--net-proc", "1:latency=5ms")
	if err := ff.Check(fs, false, ""); err != nil || !slices.Equal(ff.Nets, []string{"", "latency=5ms"}) || ff.RunNet != "0: none; 1: latency=5ms" {
		t.Errorf("--net-proc: %v, nets %q, run %q", err, ff.Nets, ff.RunNet)
	}
}

// TestMetricsFlags: --metrics-linger needs --metrics-addr, and the address is checked as
// ServeMetrics will serve it, on PORT+i for the processes of --procs.
func TestMetricsFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args  []string
		procs int
		want  string
	}{
		{nil, 1, ""},
		{[]string{"--metrics-linger", "5s"}, 1, "--metrics-linger needs --metrics-addr"},
		{[]string{"--metrics-addr", "127.0.0.1:9464", "--metrics-linger", "5s"}, 1, ""},
		{[]string{"--metrics-addr", ":9464"}, 1, "--metrics-addr"},
		{[]string{"--metrics-addr", "127.0.0.1:65535"}, 2, "--metrics-addr with --procs"},
		{[]string{"--metrics-addr", "127.0.0.1:9464", "--metrics-linger", "-1s"}, 1, "--metrics-linger -1s must not be negative"},
	} {
		var m MetricsFlags
		fs := flagSet(t, func(fs *pflag.FlagSet) { m.Register(fs, false) }, tc.args...)
		wantBad(t, strings.Join(tc.args, " "), m.Check(fs, tc.procs), tc.want)
	}
	var m MetricsFlags
	flagSet(t, func(fs *pflag.FlagSet) { m.Register(fs, true) }, "--metrics-addr", "127.0.0.1:9465", "--metrics-run-id", "r1", "--metrics-round", "3")
	if w := m.Worker(); w != (WorkerMetrics{Addr: "127.0.0.1:9465", RunID: "r1", Round: 3}) {
		t.Errorf("Worker: %+v", w)
	}
	if s := m.Spec(2); s.Addr != "127.0.0.1:9465" || s.RunID != "r1" || s.Procs != 2 {
		t.Errorf("Spec: %+v", s)
	}
}

// TestAbortFlags: --abort-on-fail needs a threshold it can check while measuring, in one
// process; a sweep checks its SLO.
func TestAbortFlags(t *testing.T) {
	t.Parallel()
	p99, err := thresholds.Parse("p99<5ms")
	if err != nil {
		t.Fatal(err)
	}
	ratio, err := thresholds.Parse("lockcore/naive throughput>=1.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sweep bool
		args  []string
		ths   []thresholds.Threshold
		procs int
		want  string
	}{
		{false, nil, nil, 1, ""},
		{false, []string{"--abort-after", "2s"}, nil, 1, "--abort-after needs --abort-on-fail"},
		{false, []string{"--abort-on-fail"}, nil, 1, "--abort-on-fail needs a --threshold to check"},
		{false, []string{"--abort-on-fail"}, []thresholds.Threshold{p99}, 2, "--abort-on-fail is not available with --procs"},
		{false, []string{"--abort-on-fail"}, []thresholds.Threshold{ratio}, 1, "none of the --threshold can be checked while measuring"},
		{false, []string{"--abort-on-fail"}, []thresholds.Threshold{ratio, p99}, 1, ""},
		{true, []string{"--abort-on-fail"}, nil, 1, ""},
	} {
		var a AbortFlags
		fs := flagSet(t, func(fs *pflag.FlagSet) { a.Register(fs, tc.sweep, 3) }, tc.args...)
		wantBad(t, strings.Join(tc.args, " "), a.Check(fs, tc.sweep, tc.ths, tc.procs), tc.want)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&AbortFlags{}).Register(fs, false, 3)
	if u := fs.Lookup("abort-on-fail").Usage; !strings.HasSuffix(u, "; exit 3") {
		t.Errorf("run's --abort-on-fail help does not end with the exit code it was given: %q", u)
	}
}

// TestFaultFlags: the faults are parsed and checked against the topology before anything
// starts, and the timeline interval has a floor.
func TestFaultFlags(t *testing.T) {
	t.Parallel()
	single := FaultCheck{Runs: 1, Topology: compose.Spec{Kind: compose.KindSingle}, Provider: "native"}
	for _, tc := range []struct {
		args []string
		c    FaultCheck
		want string
	}{
		{nil, single, ""},
		{[]string{"--timeline-interval", "1ms"}, single, "--timeline-interval 1ms: want at least 10ms"},
		{[]string{"--fault", "kill:master@3s"}, single, ""},
		{[]string{"--fault", "explode@3s"}, single, "--fault: "},
		{[]string{"--fault", "kill:master@3s"}, FaultCheck{Runs: 1, Attached: true, Topology: single.Topology}, "--fault on an attached deployment (--addr) is refused"},
		{[]string{"--fault", "kill:master@3s", "--allow-faults-on-attached"}, FaultCheck{Runs: 1, Attached: true, Topology: single.Topology}, ""},
	} {
		var ff FaultFlags
		flagSet(t, ff.Register, tc.args...)
		wantBad(t, strings.Join(tc.args, " "), ff.Check(tc.c), tc.want)
	}
}

// TestPinFlags: the placement flags are checked by PlaceRequest, with what the command line set.
func TestPinFlags(t *testing.T) {
	t.Parallel()
	single := compose.Spec{Kind: compose.KindSingle}
	for _, tc := range []struct {
		args     []string
		attached bool
		want     string
	}{
		{[]string{"--pin", "off"}, false, ""},
		{[]string{"--pin", "sometimes"}, false, `--pin "sometimes": want auto or off`},
		{[]string{"--server-cpus", "0"}, true, "--server-cpus places the servers lockbench starts"},
		{[]string{"--pin", "off", "--client-cpus", "0"}, false, "--pin off places nothing"},
	} {
		var p PinFlags
		fs := flagSet(t, p.Register, tc.args...)
		wantBad(t, strings.Join(tc.args, " "), p.Check(fs, single, tc.attached), tc.want)
	}
	var p PinFlags
	fs := flagSet(t, p.Register, "--pin", "off")
	if err := p.Check(fs, single, false); err != nil || p.Server != nil || p.Client != nil || p.Referee != nil {
		t.Errorf("--pin off: %v, server %v, client %v, referee %v: want nothing placed", err, p.Server, p.Client, p.Referee)
	}
	p = PinFlags{}
	fs = flagSet(t, p.Register, "--server-cpus", "0")
	if err := p.Check(fs, single, false); err != nil || !slices.Equal(p.Referee, pin.CPUs{0}) {
		t.Errorf("--server-cpus 0: %v, referee %v: want the referee with the servers", err, p.Referee)
	}
}

// TestStallFlags: the stall flags' defaults are the Spec's.
func TestStallFlags(t *testing.T) {
	t.Parallel()
	var s StallFlags
	flagSet(t, s.Register)
	if s.Threshold != DefaultStallThreshold || s.Allow {
		t.Errorf("defaults: %+v", s)
	}
	flagSet(t, s.Register, "--stall-threshold", "0", "--allow-stalls")
	if s.Threshold != 0 || !s.Allow {
		t.Errorf("--stall-threshold 0 --allow-stalls: %+v", s)
	}
}
