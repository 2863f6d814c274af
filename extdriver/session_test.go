package extdriver_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// builtinNull makes "exec:null" run this test binary as the null adapter, as lockbench's main
// makes it run "lockbench null-adapter" (adapter.ServeBuiltin).
func builtinNull(t *testing.T) {
	extdriver.SetNullCommand([]string{os.Args[0]})
	t.Cleanup(func() { extdriver.SetNullCommand(nil) })
	t.Setenv(envSelf, "null") // the child's TestMain serves; this process's has run already
}

// TestWithTheRest: an external driver (the built-in null adapter, exec:null) runs through
// bench's session as lockbench run and sweep run it: as a sweep's step at a concurrency, as an
// open-loop step at a rate (lockbench run --rate's loop), and two result files of its runs,
// written and read back, compare row by row.
func TestWithTheRest(t *testing.T) {
	builtinNull(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*bound)
	defer cancel()
	tg, err := target.Open(ctx, target.Spec{})
	if errors.Is(err, compose.ErrRedisServerNotFound) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	s, err := bench.NewSession(tg, bench.Spec{Drivers: []string{extdriver.NullSpec},
		Config: workloads.Config{Concurrency: 4, Keys: 20, Duration: 300 * time.Millisecond, Warmup: -1}}, bench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := &bench.SweepSteps{Session: s, Mode: results.SweepConcurrency}
	var runs []results.Run
	for i := range 2 {
		run, err := closed.Run(ctx, sweep.Step{Driver: extdriver.NullSpec, Index: 1, Load: 4, Round: i + 1, Seq: i + 1, Total: 3})
		if err != nil || run.Concurrency != 4 || run.Acquisitions == 0 || run.Errors != 0 || run.Violations != 0 {
			t.Fatalf("sweep step of 4 workers: %d workers, %d acquisitions, %d errors, %d violations, %v; want 4 that acquired, cleanly",
				run.Concurrency, run.Acquisitions, run.Errors, run.Violations, err)
		}
		// The adapter's part of the client CPU is recorded apart (from /proc, Linux only).
		if runtime.GOOS == "linux" && (run.AdapterCPUUS <= 0 || run.AdapterCPUUS > run.ClientCPUUS) {
			t.Errorf("adapter CPU %v µs of client CPU %v µs; want a part of it, above 0", run.AdapterCPUUS, run.ClientCPUUS)
		}
		runs = append(runs, run)
	}
	open := &bench.SweepSteps{Session: s, Mode: results.SweepRate}
	run, err := open.Run(ctx, sweep.Step{Driver: extdriver.NullSpec, Index: 1, Load: 400, Round: 1, Seq: 3, Total: 3})
	if err != nil || run.TargetRate != 400 || run.Acquisitions == 0 || run.Errors != 0 {
		t.Fatalf("open-loop step at 400/s: run at %v/s, %d acquisitions, %d errors, %v; want the open loop at 400/s, cleanly",
			run.TargetRate, run.Acquisitions, run.Errors, err)
	}
	if lib := run.DriverSettings["library"]; !strings.Contains(lib, "null adapter") {
		t.Errorf("the run does not record the adapter's hello: library %q", lib)
	}

	var files []*results.File
	for _, r := range runs {
		f := results.NewFile("test", nil)
		f.Runs = []results.Run{r}
		path, err := results.WriteFile(t.TempDir(), f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, back)
	}
	rep, err := compare.Compare(files[:1], files[1:], compare.Options{AllowInconclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Driver != extdriver.NullSpec || len(rep.Groups[0].Rows) == 0 {
		t.Fatalf("compare of two files of %s: %+v; want its row", extdriver.NullSpec, rep.Groups)
	}
}
