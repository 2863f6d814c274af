package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/results"
)

// lockbenchEnv is lockbench with extra environment for the process and its children.
func lockbenchEnv(t *testing.T, errb *syncBuffer, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "LOCKBENCH_TEST_MAIN=1"), env...)
	cmd.Stdout = new(bytes.Buffer)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

var procPidLine = regexp.MustCompile(`(?m)^process (\d+): pid (\d+)$`)

// assertNoOrphans checks that every generator process lockbench reported is gone.
func assertNoOrphans(t *testing.T, stderr string, want int) {
	t.Helper()
	ms := procPidLine.FindAllStringSubmatch(stderr, -1)
	if len(ms) < want {
		t.Fatalf("%d generator processes reported, want at least %d:\n%s", len(ms), want, stderr)
	}
	for _, m := range ms {
		pid, _ := strconv.Atoi(m[2])
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("generator process %s (pid %d) still exists after lockbench exited (kill 0: %v)", m[1], pid, err)
		}
	}
}

func decodeHist(t *testing.T, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkMergedEqualsProcesses asserts what the acceptance asks of a --procs run: the merged
// histograms hold the sum of the processes' counts and their largest max, the counts add up,
// and Jain's indexes are there.
func checkMergedEqualsProcesses(t *testing.T, r *results.Run, procs, concurrency int) {
	t.Helper()
	f := r.Fleet
	if f == nil || f.Procs != procs || len(f.Processes) != procs || len(f.Lost) != 0 {
		t.Fatalf("%s: fleet %+v, want %d processes, none lost", r.Driver, f, procs)
	}
	for _, kind := range []string{"acquire", "release", "cycle"} {
		pick := func(h results.Histograms) string {
			return map[string]string{"acquire": h.Acquire, "release": h.Release, "cycle": h.Cycle}[kind]
		}
		merged := decodeHist(t, pick(r.Histograms))
		var count, maxV int64
		for _, p := range f.Processes {
			h := decodeHist(t, pick(p.Histograms))
			count += h.TotalCount()
			maxV = max(maxV, h.Max())
		}
		if merged.TotalCount() != count || merged.Max() != maxV {
			t.Errorf("%s %s: merged count %d max %d, processes sum %d max %d", r.Driver, kind, merged.TotalCount(), merged.Max(), count, maxV)
		}
	}
	var acq, errs, viol int64
	for _, p := range f.Processes {
		acq += p.Acquisitions
		errs += p.Errors
		viol += p.Violations
		if p.Acquisitions == 0 {
			t.Errorf("%s: process %d acquired nothing", r.Driver, p.Index)
		}
	}
	if r.Acquisitions != acq || r.Errors != errs || r.Violations < viol {
		t.Errorf("%s: merged acquisitions %d errors %d violations %d, processes %d %d %d", r.Driver, r.Acquisitions, r.Errors, r.Violations, acq, errs, viol)
	}
	if r.Concurrency != procs*concurrency || r.Fairness == nil || len(r.Fairness.WorkerAcquisitions) != procs*concurrency {
		t.Errorf("%s: concurrency %d, fairness %+v: want %d workers", r.Driver, r.Concurrency, r.Fairness, procs*concurrency)
	} else if r.Fairness.JainWorkers <= 0 || r.Fairness.JainWorkers > 1 || r.Fairness.JainProcesses <= 0 || r.Fairness.JainProcesses > 1 {
		t.Errorf("%s: Jain's indexes %+v out of (0, 1]", r.Driver, r.Fairness)
	}
}

func TestProcsMergeLosslesslyWithSharedChecker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "3", "--driver", "lockcore,naive", "--concurrency", "4", "--keys", "1",
		"--duration", "1s", "--warmup", "0s", "--out", dir)
	code, stdout := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 2 || !f.Complete {
		t.Fatalf("%d runs, complete %v", len(f.Runs), f.Complete)
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		checkMergedEqualsProcesses(t, r, 3, 4)
		if r.Violations != 0 || !r.Fleet.CrossProcessChecker {
			t.Errorf("%s: %d violations, cross-process checker %v: want 0 and true", r.Driver, r.Violations, r.Fleet.CrossProcessChecker)
		}
	}
	for _, want := range []string{"jain/workers", "jain/processes", "lockcore round 1: 3 processes", "shared by the processes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	assertNoOrphans(t, errb.String(), 6)
	assertServerGone(t, errb.String())
}

// TestCrossProcessCheckerCatchesBrokenLock runs a lock that excludes only inside one process:
// alone it looks safe, with two processes the shared checker must see the double holders.
func TestCrossProcessCheckerCatchesBrokenLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		procs string
		code  int
	}{{"1", exitOK}, {"2", exitFailure}} {
		dir := t.TempDir()
		errb := &syncBuffer{}
		cmd := lockbench(t, errb, "run", "--procs", tc.procs, "--driver", localMutexName, "--concurrency", "2", "--keys", "1",
			"--hold", "200us", "--duration", "1s", "--warmup", "0s", "--out", dir)
		code, stdout := finish(t, cmd, errb)
		if code != tc.code {
			t.Fatalf("--procs %s: exit %d, want %d\n%s\n%s", tc.procs, code, tc.code, stdout, errb)
		}
		r := readResult(t, dir).Runs[0]
		switch tc.procs {
		case "1":
			if r.Violations != 0 || r.Acquisitions == 0 {
				t.Errorf("one process: %d violations, %d acquisitions; want 0 and some: the lock excludes inside a process", r.Violations, r.Acquisitions)
			}
		default:
			if r.Violations == 0 || r.Fleet.SharedViolations == 0 || !strings.Contains(errb.String(), "SAFETY") {
				t.Errorf("two processes: violations %d, shared %d: the cross-process checker missed a lock that does not exclude across processes\n%s", r.Violations, r.Fleet.SharedViolations, errb)
			}
		}
	}
}

// TestKilledProcessGivesIncompleteMergedResult kills one generator process with SIGKILL mid-run.
func TestKilledProcessGivesIncompleteMergedResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbenchEnv(t, errb, []string{crashEnv + "=1"}, "run", "--procs", "3", "--driver", "naive", "--concurrency", "2",
		"--keys", "10", "--duration", "4s", "--warmup", "0s", "--out", dir)
	code, stdout := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d (a process was lost)\n%s\n%s", code, exitFailure, stdout, errb)
	}
	f := readResult(t, dir)
	if f.Complete || len(f.Runs) != 1 {
		t.Fatalf("complete %v, %d runs: want one incomplete run", f.Complete, len(f.Runs))
	}
	r := f.Runs[0]
	if r.Complete || r.Fleet == nil || !slices.Equal(r.Fleet.Lost, []int{1}) || len(r.Fleet.Processes) != 2 {
		t.Fatalf("run complete %v fleet %+v: want process 1 lost, 0 and 2 merged", r.Complete, r.Fleet)
	}
	if !strings.Contains(r.Incomplete, "process 1") || !strings.Contains(r.Incomplete, "killed") {
		t.Errorf("incomplete reason %q does not name the killed process", r.Incomplete)
	}
	if r.Acquisitions != r.Fleet.Processes[0].Acquisitions+r.Fleet.Processes[1].Acquisitions || r.Acquisitions == 0 {
		t.Errorf("merged %d acquisitions, the survivors %+v", r.Acquisitions, r.Fleet.Processes)
	}
	if !strings.Contains(stdout, "LOST: no result from process 1") {
		t.Errorf("summary does not name the lost process:\n%s", stdout)
	}
	assertNoOrphans(t, errb.String(), 3)
	assertServerGone(t, errb.String())
}

func TestCtrlCWithProcsWritesMergedIncompleteResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--driver", "naive,lockcore", "--concurrency", "2", "--keys", "10",
		"--duration", "60s", "--warmup", "0s", "--out", dir)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "[proc 1] process 1 of 2") {
		if time.Now().After(deadline) {
			t.Fatalf("processes did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(fleet.DefaultStartDelay + 2*time.Second) // past the common start (2.5 s for 2 processes), into the measured phase
	interruptRun(t, cmd, errb)
	f := readResult(t, dir)
	if f.Complete || len(f.Runs) != 1 {
		t.Fatalf("complete %v, %d runs: want the first driver only, incomplete", f.Complete, len(f.Runs))
	}
	r := f.Runs[0]
	if r.Complete || r.Fleet == nil || len(r.Fleet.Processes) != 2 || len(r.Fleet.Lost) != 0 || r.Acquisitions == 0 {
		t.Fatalf("interrupted run: complete %v acquisitions %d fleet %+v: want both processes' partial results", r.Complete, r.Acquisitions, r.Fleet)
	}
	assertNoOrphans(t, errb.String(), 2)
	assertServerGone(t, errb.String())
}

// TestMergeOfSeparateWorkersEqualsProcs starts 3 workers by hand, merges their files, and
// compares with what --procs 3 writes for the same configuration on the same server.
func TestMergeOfSeparateWorkersEqualsProcs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	srv := redistest.NewServer(t)
	config := []string{"--addr", srv.Addrs()[0], "--driver", "lockcore", "--concurrency", "3", "--keys", "1", "--duration", "1s", "--warmup", "0s"}
	dir := t.TempDir()
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	var workers []*exec.Cmd
	var errbs []*syncBuffer
	var files []string
	for i := range 3 {
		errb := &syncBuffer{}
		out := filepath.Join(dir, fmt.Sprintf("proc-%d.json", i))
		files = append(files, out)
		// --run as lockbench run gives its processes, so that both results have the same fields.
		workers = append(workers, lockbench(t, errb, append([]string{"worker", "--procs", "3", "--index", strconv.Itoa(i), "--start-at", start, "--output", out, "--run", "separate"}, config...)...))
		errbs = append(errbs, errb)
	}
	for i, w := range workers {
		if code, _ := finish(t, w, errbs[i]); code != exitOK {
			t.Fatalf("worker %d: exit %d\n%s", i, code, errbs[i])
		}
	}
	mergedPath := filepath.Join(dir, "merged.json")
	var out, errb bytes.Buffer
	// Not in file order: merge sorts the processes by index.
	if code := dispatch([]string{"merge", files[2], files[0], files[1], "-o", mergedPath}, &out, &errb); code != exitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, out.String(), errb.String())
	}
	merged, err := results.ReadFile(mergedPath)
	if err != nil {
		t.Fatal(err)
	}

	procsDir := t.TempDir()
	perrb := &syncBuffer{}
	cmd := lockbench(t, perrb, append([]string{"run", "--procs", "3", "--out", procsDir}, config...)...)
	if code, _ := finish(t, cmd, perrb); code != exitOK {
		t.Fatalf("run --procs 3: exit %d\n%s", code, perrb)
	}
	procs := readResult(t, procsDir)

	if len(merged.Runs) != 1 || len(procs.Runs) != 1 {
		t.Fatalf("merged %d runs, --procs %d runs", len(merged.Runs), len(procs.Runs))
	}
	m, p := &merged.Runs[0], &procs.Runs[0]
	checkMergedEqualsProcesses(t, m, 3, 3)
	checkMergedEqualsProcesses(t, p, 3, 3)
	if m.Case().String() != p.Case().String() || m.Driver != p.Driver || m.Fleet.Procs != p.Fleet.Procs {
		t.Errorf("merged %s %s procs %d, --procs %s %s procs %d", m.Driver, m.Case(), m.Fleet.Procs, p.Driver, p.Case(), p.Fleet.Procs)
	}
	if mk, pk := jsonKeys(t, m), jsonKeys(t, p); !slices.Equal(mk, pk) {
		t.Errorf("merged run has fields %v, --procs run %v", mk, pk)
	}
	if !merged.Complete || m.Violations != 0 || m.RedisCommands == 0 {
		t.Errorf("merged: complete %v, %d violations, %d commands (process 0 measures the server)", merged.Complete, m.Violations, m.RedisCommands)
	}
}

// jsonKeys lists the fields a run has in its JSON form, nested one level (fleet, fairness), but
// not the keys of maps whose keys are data (commands by name, driver settings), nor the round:
// run numbers the rounds of its drivers, a merge of one set of workers is no round of anything;
// nor the audit of the deployment, which a merge of files cannot make.
func jsonKeys(t *testing.T, r *results.Run) []string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range m {
		// audit: the post-run scan is made by whoever holds the deployment (run, --procs
		// included); merge has only files.
		if k == "round" || k == "audit" {
			continue
		}
		keys = append(keys, k)
		if sub, ok := v.(map[string]any); ok && k != "redis_commands_by_name" && k != "driver_settings" {
			for sk := range maps.Keys(sub) {
				keys = append(keys, k+"."+sk)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func TestFleetBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	worker := func(driver string, index int) string {
		r := results.Run{Driver: driver, Workload: "contention", Topology: "single", Concurrency: 2, Keys: 1, KeyDist: "uniform", Complete: true}
		if err := r.Fill(nil, time.Second); err != nil {
			t.Fatal(err)
		}
		r.SetProcess(index, 2, time.Unix(1700000000, 0), "h", 1, false)
		f := results.NewFile("test", nil)
		f.Runs = []results.Run{r}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", driver, index))
		if err := results.WriteFileAt(path, f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	lc0, lc1, nv1 := worker("lockcore", 0), worker("lockcore", 1), worker("naive", 1)
	junk := filepath.Join(dir, "junk.json")
	os.WriteFile(junk, []byte("{not json"), 0o644)
	addr := []string{"--addr", "127.0.0.1:1"}
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"run", "--procs", "0"}, "--procs 0: want 1 to 256"},
		{[]string{"run", "--procs", "-2"}, "--procs -2"},
		{[]string{"run", "--procs", "1000"}, "--procs 1000"},
		{[]string{"run", "--procs", "two"}, "invalid argument"},
		{[]string{"worker"}, "give its --addr"},
		{append([]string{"worker", "--procs", "0"}, addr...), "--procs 0"},
		{append([]string{"worker", "--procs", "3", "--index", "3"}, addr...), "--index 3: want 0 to 2"},
		{append([]string{"worker", "--index", "-1"}, addr...), "--index -1"},
		{append([]string{"worker", "--start-at", "noon"}, addr...), `--start-at "noon"`},
		{append([]string{"worker", "--driver", "naive,lockcore"}, addr...), "a worker runs one driver"},
		{append([]string{"worker", "--repeat", "2", "--driver", "naive"}, addr...), "a worker runs once"},
		{append([]string{"worker", "--driver", "naive", "--threshold", "p99<1ms"}, addr...), "--threshold"},
		{append([]string{"worker", "--driver", "naive", "--trace", filepath.Join(dir, "no", "t.trace")}, addr...), "--trace: open"},
		{append([]string{"worker", "--driver", "naive", "--cpuprofile", filepath.Join(dir, "no", "c.prof")}, addr...), "--cpuprofile: open"},
		{[]string{"run", "--trace", filepath.Join(dir, "no", "t.trace")}, "--trace: open"},
		{[]string{"merge", lc0, lc1}, "-o OUT"},
		{[]string{"merge", "-o", filepath.Join(dir, "m.json")}, "no result files"},
		{[]string{"merge", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "m.json")}, "missing.json"},
		{[]string{"merge", junk, "-o", filepath.Join(dir, "m.json")}, "bad result file"},
		{[]string{"merge", lc0, nv1, "-o", filepath.Join(dir, "m.json")}, "not the processes of one run"},
		{[]string{"merge", lc0, lc0, "-o", filepath.Join(dir, "m.json")}, "process 0 given twice"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		if all := out.String() + errb.String(); code != exitUsage || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, exitUsage, tc.out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m.json")); err == nil {
		t.Error("a refused merge wrote its output")
	}
	for _, args := range [][]string{{"worker", "--help"}, {"help", "worker"}, {"merge", "--help"}, {"run", "--help"}} {
		var out, errb bytes.Buffer
		want := map[string]string{"worker": "--start-at", "merge": "-o OUT", "run": "--procs"}[args[0]]
		if args[0] == "help" {
			want = "--start-at"
		}
		if code := dispatch(args, &out, &errb); code != exitOK || !strings.Contains(out.String(), want) {
			t.Errorf("lockbench %q: exit %d, help lacks %q", args, code, want)
		}
	}
	// The right files merge, and a missing process makes the merged file incomplete.
	var out, errb bytes.Buffer
	m := filepath.Join(dir, "ok.json")
	if code := dispatch([]string{"merge", lc1, "-o", m}, &out, &errb); code != exitOK {
		t.Fatalf("merge of one process of 2: exit %d %s", code, errb.String())
	}
	f, err := results.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	if f.Complete || !slices.Equal(f.Runs[0].Fleet.Lost, []int{0}) {
		t.Errorf("merge of process 1 of 2: complete %v lost %v, want incomplete, process 0 lost", f.Complete, f.Runs[0].Fleet.Lost)
	}
}

// TestProcsSplitTheRate runs an open loop over two processes: each gets half the rate, and the
// merged run's target, achieved rate, late and dropped counts and service-time histogram add up.
func TestProcsSplitTheRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--driver", "lockcore", "--rate", "400", "--arrival", "poisson",
		"--concurrency", "8", "--keys", "100", "--duration", "2s", "--warmup", "0s", "--out", dir)
	code, stdout := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(f.Runs))
	}
	r := &f.Runs[0]
	checkMergedEqualsProcesses(t, r, 2, 8)
	if r.Pacing != results.PacingOpen || r.Arrival != "poisson" || r.TargetRate != 400 {
		t.Errorf("merged pacing %q arrival %q target %g, want open poisson 400", r.Pacing, r.Arrival, r.TargetRate)
	}
	if r.ServiceLatencyUS == nil || r.Histograms.Service == "" {
		t.Fatalf("merged run has no service-time histogram")
	}
	if got := decodeHist(t, r.Histograms.Service).TotalCount(); got != r.Acquisitions {
		t.Errorf("merged service-time histogram holds %d, acquisitions %d", got, r.Acquisitions)
	}
	// Each process's share of the schedule is half: its own run files are merged away, so
	// check the share through the acquisitions, which at 200/s over 2 s a process keeps up with.
	for _, p := range r.Fleet.Processes {
		if p.Acquisitions < 200 || p.Acquisitions > 600 {
			t.Errorf("process %d made %d acquisitions at a share of 200/s for 2 s", p.Index, p.Acquisitions)
		}
	}
	if r.AchievedRate <= 0 || r.AchievedRate > 1.5*r.TargetRate {
		t.Errorf("merged achieved rate %g for a target of %g", r.AchievedRate, r.TargetRate)
	}
	assertNoOrphans(t, errb.String(), 2)
}

// With --procs, the lock traffic is in the generator processes, so each one writes profiles of
// its own beside the parent's: one file per process and per --procs run, none overwritten.
func TestProcsProfileEachProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "c.prof"), filepath.Join(dir, "t.trace")
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--driver", "naive,lockcore:batch=0", "--concurrency", "2",
		"--keys", "10", "--duration", "300ms", "--warmup", "0s", "--no-results", "--cpuprofile", cpu, "--trace", tr)
	code, stdout := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errb)
	}
	want := []string{cpu, tr}
	for _, run := range []string{"run1.naive", "run2.lockcore_batch-0"} {
		for _, p := range []string{"p0", "p1"} {
			want = append(want, cpu+"."+run+"."+p, tr+"."+run+"."+p)
		}
	}
	for _, path := range want {
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (want a non-empty profile)", filepath.Base(path), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(want) {
		t.Errorf("%d files in the profile directory, want %d", len(entries), len(want))
	}
}
