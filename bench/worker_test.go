package bench

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// A worker run in this process attaches, measures its share and hands back one run marked with
// its process, by file or through the collection store, which merge --from then reads.
func TestWorkHandsBackOneProcess(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	store := redistest.NewServer(t)
	out := filepath.Join(t.TempDir(), "p1.json")
	w := WorkerSpec{Driver: "naive", Addrs: []string{srv.Addr()}, Config: short(), Procs: 2, Index: 1, Output: out,
		RunID: "inproc", Collect: Endpoint{Addr: store.Addr()}}
	rep := &lines{}
	res, err := Work(t.Context(), w, WorkerOptions{Reporter: rep, Version: "test", Image: "img"})
	if err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed || len(f.Runs) != 1 || f.Runs[0].Acquisitions == 0 {
		t.Fatalf("failed %v, %d runs: want one run that acquired\n%s", res.Failed, len(f.Runs), rep)
	}
	r := f.Runs[0]
	if r.Fleet == nil || r.Fleet.RunID != "inproc" || len(r.Fleet.Processes) != 1 || r.Fleet.Processes[0].Index != 1 ||
		r.Fleet.Processes[0].Image != "img" || r.Fleet.Processes[0].Version != "test" {
		t.Errorf("fleet %+v; want process 1 of run inproc, image and version recorded", r.Fleet)
	}
	if r.RedisCommands > 0 {
		t.Errorf("process 1 measured the servers (%d commands); only process 0 does", r.RedisCommands)
	}
	stored, err := collect.Fetch(t.Context(), collect.Options{Addr: store.Addr()}, "inproc", 2, "test", nil)
	if !errors.Is(err, collect.ErrMissing) || stored == nil || len(stored.Runs) != 1 || !slices.Equal(stored.Runs[0].Fleet.Lost, []int{0}) {
		t.Errorf("stored: %v, %v; want process 1's result, process 0 missing", stored, err)
	}
}

// A worker whose referee is the Redis under test is refused before it measures: bad input.
func TestWorkRefusesRefereeUnderTest(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	dir := t.TempDir()
	w := WorkerSpec{Driver: "naive", Addrs: []string{srv.Addr()}, Config: short(), RunID: "r1", Referee: Endpoint{Addr: "redis://" + srv.Addr()}, Out: dir}
	_, err := Work(t.Context(), w, WorkerOptions{})
	if !errors.Is(err, ErrBadSpec) || !errors.Is(err, ErrRefereeUnderTest) || !strings.Contains(err.Error(), "--referee") {
		t.Errorf("err %v; want bad input naming --referee, the referee under test", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 0 {
		t.Errorf("a refused worker wrote %v", files)
	}
}

// The processes of a Fleet get every setting as a WorkerSpec and no password on their command
// line: the deployment's, the collection store's and the referee's go by environment.
func TestFleetWorkersGetNoPassword(t *testing.T) {
	t.Parallel()
	const pw, refPW, storePW = "s3cret-data", "s3cret-ref", "s3cret-store"
	srv := redistest.NewServer(t, "--requirepass", pw)
	ref := redistest.NewServer(t, "--requirepass", refPW)
	settings, err := conn.New(conn.Options{Addrs: []string{"redis://:" + pw + "@" + srv.Addr()}, Topology: "single"})
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := target.Open(t.Context(), target.Spec{Attach: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	stall, err := faults.Parse("stall:gen2@1s+500ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg := short()
	cfg.Rate, cfg.Duration = 1000, 3*time.Second
	spec := Spec{Drivers: []string{"lockcore"}, Config: cfg, Topology: "single", Net: "0: none; 1: latency=5ms", Faults: []faults.Fault{stall}}
	referee, err := StartReferee(t.Context(), tgt, RefereeSpec{Endpoint: Endpoint{Addr: "redis://:" + refPW + "@" + ref.Addr()}, Resource: "fenced"}, Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer referee.Close()
	r := &remote{f: &Fleet{Procs: 2, Nets: []string{"", "latency=5ms"}, CPUProfile: "/tmp/c.prof", Collect: Endpoint{Addr: "redis://:" + storePW + "@127.0.0.1:1"}},
		tgt: tgt, spec: spec, ref: referee, rep: Discard, runs: 1}
	env, refEP, err := r.env([]string{collect.EnvPassword + "=" + storePW})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{conn.EnvPassword + "=" + pw, "LOCKBENCH_REFEREE_PASSWORD=" + refPW, collect.EnvPassword + "=" + storePW} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %s", env, strings.SplitN(want, "=", 2)[0])
		}
	}
	w := r.worker("lockcore", 2, 1, r.childAddrs(), ClockRedis)
	w.Referee, w.RunID = refEP, "r"
	args := strings.Join(w.Args(), " ")
	for _, secret := range []string{pw, refPW, storePW} {
		if strings.Contains(args, secret) {
			t.Errorf("a password on the command line: %s", args)
		}
	}
	want := WorkerSpec{Driver: "lockcore", Workload: DefaultWorkload, Procs: 2, Index: 1, Clock: ClockRedis,
		Net: "latency=5ms", FleetNet: spec.Net, Stalls: []Stall{{At: time.Second, For: 500 * time.Millisecond}},
		CPUProfile: "/tmp/c.prof.run1.lockcore.p1", Referee: Endpoint{Addr: "redis://@" + ref.Addr()}} // the URL as given, its password removed
	if w.Config.Rate != 500 || w.Net != want.Net || w.FleetNet != want.FleetNet || !slices.Equal(w.Stalls, want.Stalls) ||
		w.CPUProfile != want.CPUProfile || w.Procs != 2 || w.Index != 1 || w.Referee != want.Referee || !slices.Equal(w.Addrs, []string{"redis://@" + srv.Addr()}) {
		t.Errorf("process 1's spec %+v\nwant half the rate, its own net, gen2's stall, its profile, the addresses without passwords", w)
	}
	if got := w.Filled().Config.Warmup; got != -1 {
		t.Errorf("the spec's --warmup 0s reaches the processes as warm-up %v; want none (-1)", got)
	}
	if w0 := r.worker("lockcore", 2, 0, r.childAddrs(), ClockRedis); len(w0.Stalls) != 0 || w0.Net != "" {
		t.Errorf("process 0: stalls %v, net %q; want none", w0.Stalls, w0.Net)
	}
}

// A native referee counts the unsafe lock's double grants in a run made in this process, and
// none for a lock that excludes.
func TestRefereeInOneProcess(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	ref, err := StartReferee(t.Context(), tg, RefereeSpec{Endpoint: Endpoint{Addr: NativeReferee}}, Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	// One hot key held 20 ms by 3 workers: the unsafe lock grants it twice at once.
	cfg := workloads.Config{Concurrency: 3, Keys: 1, Hold: 20 * time.Millisecond, Duration: time.Second, Warmup: -1}
	res, err := Run(t.Context(), tg, Spec{Drivers: []string{"unsafe", "naive"}, Config: cfg}, Options{Referee: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed {
		t.Error("the session did not fail; unsafe's violations should fail it")
	}
	for _, r := range res.File.Runs {
		if !slices.Equal(r.Checkers, []string{"in-process", "referee"}) || r.Referee == nil || r.Referee.Entries == 0 {
			t.Fatalf("%s: checkers %v, referee %+v", r.Driver, r.Checkers, r.Referee)
		}
		if caught := r.Referee.Violations > 0; caught != (r.Driver == "unsafe") {
			t.Errorf("%s: the referee counted %d violations", r.Driver, r.Referee.Violations)
		}
	}
}

// Serving metrics on every interface is allowed, with a warning.
func TestServeMetricsWarnsOnEveryInterface(t *testing.T) {
	t.Parallel()
	rep := &lines{}
	m, err := ServeMetrics(MetricsSpec{Addr: "0.0.0.0:0", RunID: "x"}, rep)
	if err != nil {
		t.Fatal(err)
	}
	m.Stop()
	if !strings.Contains(rep.String(), "every interface") {
		t.Errorf("lines %q; want a warning about every interface", rep)
	}
	if _, err := ServeMetrics(MetricsSpec{Addr: "9464"}, rep); !errors.Is(err, ErrBadSpec) {
		t.Errorf("ServeMetrics(9464): %v; want bad input", err)
	}
}

// Without a run id, the series get a random one, different each time, and the line says which.
func TestServeMetricsRandomRunID(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{}
	for range 2 {
		rep := &lines{}
		m, err := ServeMetrics(MetricsSpec{Addr: "127.0.0.1:0"}, rep)
		if err != nil {
			t.Fatal(err)
		}
		m.Stop()
		id := m.spec.RunID
		if len(id) != 8 || strings.Trim(id, "0123456789abcdef") != "" || !strings.Contains(rep.String(), "(run_id "+id+")") {
			t.Errorf("run id %q, lines %q; want 8 hex digits, said", id, rep)
		}
		ids[id] = true
	}
	if len(ids) != 2 {
		t.Errorf("two servers, run ids %v; want two random ones", ids)
	}
}
