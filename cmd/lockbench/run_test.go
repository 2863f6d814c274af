package main

import (
	"bytes"
	"context"
	"github.com/lockbench/lockbench/internal/clitest"
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

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// lockbench starts the test binary as lockbench with args; stderr is captured into errb.
func lockbench(t *testing.T, errb *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI must install it: scripts/install-deps.sh)")
		}
		t.Skip("redis-server not on PATH; install it with scripts/install-deps.sh")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKBENCH_TEST_MAIN=1")
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

var pidLine = regexp.MustCompile(`redis-server pid (\d+)`)

// assertServerGone checks every redis-server lockbench reported on stderr is no longer running.
func assertServerGone(t *testing.T, stderr string) {
	t.Helper()
	ms := pidLine.FindAllStringSubmatch(stderr, -1)
	if ms == nil {
		t.Fatalf("no redis-server pid in stderr:\n%s", stderr)
	}
	for _, m := range ms {
		pid, _ := strconv.Atoi(m[1])
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Fatalf("redis-server pid %d still exists after lockbench exited (kill 0: %v)", pid, err)
		}
	}
}

func readResult(t *testing.T, dir string) *results.File {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) != 1 {
		t.Fatalf("want one result file in %s, found %v", dir, paths)
	}
	f, err := results.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(paths[0], ".json") + ".bench.txt"); err != nil {
		t.Fatalf("benchstat file missing: %v", err)
	}
	return f
}

func TestRunEndToEndOnEmbeddedRedis(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "1s", "--warmup", "200ms", "--out", dir)
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("lockbench run: %v\nstderr:\n%s", err, errb)
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{"lockcore", "naive", "acq/s", "violations"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	f := readResult(t, dir)
	if !f.Complete || len(f.Runs) != 2 {
		t.Fatalf("result: complete=%v runs=%d", f.Complete, len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.ThroughputPerS <= 0 || r.Violations != 0 || !r.Complete || r.RedisCommandsPerAcquisition <= 0 {
			t.Errorf("%s: throughput %v, violations %d, complete %v, cmds/acq %v", r.Driver, r.ThroughputPerS, r.Violations, r.Complete, r.RedisCommandsPerAcquisition)
		}
		// The timeline: one point per second of the 1 s phase (and a sliver), adding up to the run.
		if r.Timeline == nil || len(r.Timeline.Points) < 1 || len(r.Timeline.Points) > 2 {
			t.Errorf("%s: timeline %+v; want 1 or 2 points for a 1 s phase", r.Driver, r.Timeline)
			continue
		}
		if acq, errs := r.Timeline.Totals(); acq != r.Acquisitions || errs != r.Errors || r.Timeline.Points[0].AcquireP99US <= 0 {
			t.Errorf("%s: timeline adds up to %d acquisitions, %d errors (p99 %v); the run has %d, %d",
				r.Driver, acq, errs, r.Timeline.Points[0].AcquireP99US, r.Acquisitions, r.Errors)
		}
	}
	assertServerGone(t, errb.String())
	checkExport(t, dir, f)
}

// checkExport checks the HDR files lockbench run wrote beside the result in dir, and that
// lockbench export makes the same files again from the result file alone.
func checkExport(t *testing.T, dir string, f *results.File) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	base := strings.TrimSuffix(paths[0], ".json")
	again := t.TempDir()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"export", "--out", again, paths[0]}, &out, &errb); code != exitOK {
		t.Fatalf("lockbench export: exit %d: %s", code, errb.String())
	}
	listed := strings.Fields(out.String())
	if len(listed) != 2*len(f.Runs) {
		t.Errorf("export listed %v; want a .hgrm and a .hlog per run (%d runs)", listed, len(f.Runs))
	}
	for _, r := range f.Runs {
		for _, ext := range []string{".hgrm", ".hlog"} {
			name := base + "-" + r.Driver + ext
			byRun, err := os.ReadFile(name)
			if err != nil {
				t.Errorf("lockbench run did not write %s: %v", name, err)
				continue
			}
			byExport, err := os.ReadFile(filepath.Join(again, filepath.Base(name)))
			if err != nil || !bytes.Equal(byRun, byExport) {
				t.Errorf("export of %s differs from what run wrote (err %v)", filepath.Base(name), err)
			}
		}
	}
}

func TestCtrlCWritesIncompleteResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "60s", "--warmup", "100ms", "--out", dir)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "[1/2]") {
		if time.Now().After(deadline) {
			t.Fatalf("run did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // past the warm-up, into the measured phase
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("lockbench did not exit after Ctrl-C:\n%s", errb)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit code %d after Ctrl-C, want %d\n%s", code, exitInterrupted, errb)
	}
	f := readResult(t, dir)
	if f.Complete || len(f.Runs) != 1 {
		t.Fatalf("result after Ctrl-C: complete=%v runs=%d (want incomplete, the first driver only)", f.Complete, len(f.Runs))
	}
	r := f.Runs[0]
	if r.Complete || r.Incomplete == "" || r.Acquisitions == 0 {
		t.Fatalf("interrupted run: complete=%v reason=%q acquisitions=%d", r.Complete, r.Incomplete, r.Acquisitions)
	}
	assertServerGone(t, errb.String())
}

// finish waits for lockbench and returns its exit code and stdout.
func finish(t *testing.T, cmd *exec.Cmd, errb *syncBuffer) (int, string) {
	t.Helper()
	return clitest.Finish(t, cmd, errb)
}

// interruptRun sends lockbench the Ctrl-C of a user, waits for it to finish and fails the test
// unless it exits as an interrupted run does; it returns what lockbench wrote to stdout.
func interruptRun(t *testing.T, cmd *exec.Cmd, errb *syncBuffer) string {
	t.Helper()
	return clitest.InterruptRun(t, cmd, errb, exitInterrupted)
}

func TestRepeatInterleavesDriversAndReportsRatios(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "naive,lockcore", "--repeat", "2", "--concurrency", "4", "--keys", "50",
		"--duration", "300ms", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	f := readResult(t, dir)
	if f.Repeat != 2 || f.Baseline != "naive" || f.Topology == nil || f.Topology.Kind != "single" || len(f.Topology.Nodes) != 1 {
		t.Errorf("file: repeat %d, baseline %q, topology %+v", f.Repeat, f.Baseline, f.Topology)
	}
	// Round 1 runs a b, round 2 rotates to b a.
	want := []struct {
		driver string
		round  int
	}{{"naive", 1}, {"lockcore", 1}, {"lockcore", 2}, {"naive", 2}}
	if len(f.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(f.Runs), len(want))
	}
	for i, w := range want {
		r := f.Runs[i]
		if r.Driver != w.driver || r.Round != w.round {
			t.Errorf("run %d: %s round %d, want %s round %d", i, r.Driver, r.Round, w.driver, w.round)
		}
		if r.Acquisitions == 0 || r.RedisCommandsPerAcquisition <= 0 || r.ServerCPUUS <= 0 || r.ClientCPUUS <= 0 || len(r.Nodes) != 1 {
			t.Errorf("run %d (%s): acquisitions %d, cmds/acq %v, server cpu %v, client cpu %v, nodes %+v",
				i, r.Driver, r.Acquisitions, r.RedisCommandsPerAcquisition, r.ServerCPUUS, r.ClientCPUUS, r.Nodes)
		}
	}
	for _, s := range []string{"rounds", "acq/s min–max", "medians over the rounds", "lockcore: ", "x naive throughput", "client cpu/acq"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"[1/4] round 1/2 naive:", "[2/4] round 1/2 lockcore:", "[3/4] round 2/2 lockcore:", "[4/4] round 2/2 naive:"} {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("progress lacks %q:\n%s", s, errb)
		}
	}
	assertServerGone(t, errb.String())
}

func TestUnsupportedDriverIsSkipped(t *testing.T) {
	t.Parallel()
	// naive has no multi-master mode; redsync (RedLock) has, when it is built in.
	redlock := ""
	if _, err := drivers.Get("redsync"); err == nil {
		redlock = "redsync"
	}
	list := "naive"
	if redlock != "" {
		list += "," + redlock
	}
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--topology", "masters:2", "--driver", list, "--concurrency", "4", "--keys", "50",
		"--duration", "300ms", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d: a skip must not fail the run\nstderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "skip naive on masters:2: naive has no multi-master") {
		t.Errorf("stderr lacks the skip line:\n%s", errb)
	}
	f := readResult(t, dir)
	if len(f.Skipped) != 1 || f.Skipped[0].Driver != "naive" || f.Skipped[0].Topology != "masters:2" || f.Skipped[0].Reason == "" {
		t.Errorf("skipped %+v, want naive on masters:2 with a reason", f.Skipped)
	}
	assertServerGone(t, errb.String())
	if redlock == "" {
		if len(f.Runs) != 0 || !strings.Contains(errb.String(), "nothing ran") {
			t.Errorf("%d runs; stderr:\n%s", len(f.Runs), errb)
		}
		return
	}
	if len(f.Runs) != 1 || f.Runs[0].Driver != redlock || f.Runs[0].TopologySpec != "masters:2" {
		t.Fatalf("%d runs, want %s's only", len(f.Runs), redlock)
	}
	// RedLock takes every master: both must have served commands.
	r := f.Runs[0]
	if len(r.Nodes) != 2 || r.Nodes[0].Commands == 0 || r.Nodes[1].Commands == 0 {
		t.Errorf("per-node commands %+v, want both masters > 0", r.Nodes)
	}
	if !strings.Contains(out, "per node") || !strings.Contains(out, "masters:2") {
		t.Errorf("summary lacks the topology or the per-node block:\n%s", out)
	}
}

// TestMastersRunsLockcoreRedLock runs lockcore (RedLock over one client per master), redsync
// and naive on 3 independent masters: the two RedLocks run, with every master serving commands,
// and naive is skipped. lockcore's RedLocks wait 2 s for a master, not 200 ms: a loaded CI
// machine once left a release unanswered by all three for that long, a failed run.
func TestMastersRunsLockcoreRedLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--topology", "masters:3", "--driver", "lockcore:node_timeout=2s,redsync,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "1s", "--warmup", "0s", "--out", dir)
	code, _ := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	f := readResult(t, dir)
	if len(f.Skipped) != 1 || f.Skipped[0].Driver != "naive" {
		t.Errorf("skipped %+v, want naive only", f.Skipped)
	}
	var ran []string
	for _, r := range f.Runs {
		ran = append(ran, r.Driver)
		if r.Acquisitions == 0 || r.Errors != 0 || r.Violations != 0 {
			t.Errorf("%s: %d acquisitions, errors %v, %d violations", r.Driver, r.Acquisitions, r.ErrorsByKind, r.Violations)
		}
		busy := 0
		for _, n := range r.Nodes {
			if n.Commands > 0 {
				busy++
			}
		}
		if busy != 3 {
			t.Errorf("%s: per-node commands %+v, want all 3 masters > 0", r.Driver, r.Nodes)
		}
	}
	if !slices.Equal(ran, []string{"lockcore:node_timeout=2s", "redsync"}) {
		t.Fatalf("runs %v, want lockcore and redsync", ran)
	}
	if s := f.Runs[0].DriverSettings; !strings.HasPrefix(s["lock"], "RedLock over 3") || s["quorum"] != "2" || s["node_timeout"] != "2s" {
		t.Errorf("lockcore settings %v, want RedLock over 3 masters, quorum 2, node timeout 2s", s)
	}
	assertServerGone(t, errb.String())
}

// TestLockKindWorkloads runs the workloads of other lock kinds end to end: lockcore runs each
// without violations; naive, which has only a mutex, is skipped with the reason.
func TestLockKindWorkloads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		workload string
		flags    []string
		need     string
	}{
		{"multilock", []string{"--fanout", "2"}, "needs multi locks"},
		{"rw", []string{"--read-ratio", "0.8"}, "needs rw locks"},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			errb := &syncBuffer{}
			args := append([]string{"run", "--workload", tc.workload, "--driver", "lockcore,naive", "--concurrency", "4",
				"--keys", "20", "--hold", "100us", "--duration", "300ms", "--warmup", "0s", "--out", dir}, tc.flags...)
			cmd := lockbench(t, errb, args...)
			code, out := finish(t, cmd, errb)
			if code != exitOK {
				t.Fatalf("exit %d\nstderr:\n%s", code, errb)
			}
			f := readResult(t, dir)
			if len(f.Runs) != 1 || f.Runs[0].Driver != "lockcore" || f.Runs[0].Workload != tc.workload || f.Runs[0].Acquisitions == 0 || f.Runs[0].Violations != 0 || f.Runs[0].Errors != 0 {
				t.Fatalf("runs %+v, want lockcore's %s run without violations or errors", f.Runs, tc.workload)
			}
			if len(f.Skipped) != 1 || f.Skipped[0].Driver != "naive" || !strings.Contains(f.Skipped[0].Reason, tc.need) {
				t.Errorf("skipped %+v, want naive: it %s", f.Skipped, tc.need)
			}
			if !strings.Contains(out, tc.workload) {
				t.Errorf("summary lacks the workload:\n%s", out)
			}
			assertServerGone(t, errb.String())
		})
	}
}

func TestClusterSpreadsOverEveryMaster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--topology", "cluster", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "10000",
		"--duration", "500ms", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	f := readResult(t, dir)
	masters := 0
	for _, n := range f.Topology.Nodes {
		if n.Role == "master" {
			masters++
		}
	}
	if f.Topology.Kind != "cluster" || masters != 3 {
		t.Fatalf("topology %+v, want a cluster with 3 masters", f.Topology)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(f.Runs))
	}
	for _, r := range f.Runs {
		// CROSSSLOT or MOVED failures would be counted as errors.
		if r.Errors != 0 || r.Acquisitions == 0 {
			t.Errorf("%s: %d errors %v, %d acquisitions", r.Driver, r.Errors, r.ErrorsByKind, r.Acquisitions)
		}
		busy := 0
		for _, n := range r.Nodes {
			if n.Role == "master" && n.Commands > 0 {
				busy++
			}
		}
		if busy != 3 {
			t.Errorf("%s: per-node commands %+v: want all 3 masters > 0", r.Driver, r.Nodes)
		}
	}
	if !strings.Contains(out, "per node") || strings.Contains(errb.String(), "CROSSSLOT") {
		t.Errorf("summary lacks the per-node block, or CROSSSLOT on stderr:\n%s\n%s", out, errb)
	}
	assertServerGone(t, errb.String())
}

// An attached deployment is never flushed: lockbench deletes only keys of its own shapes for its
// prefix (a stale lock of a killed run, with --clean-existing), not a key that contains it.
func TestAttachedDeploymentKeepsOtherKeys(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	srv := redistest.NewServer(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	for _, kv := range [][2]string{{"user:keep", "1"}, {"bench[1]:7", "left by a killed run"}, {"x{bench[1]:k}", "someone's"}} {
		if err := rdb.Do(ctx, rdb.B().Set().Key(kv[0]).Value(kv[1]).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", srv.Addrs()[0], "--key-prefix", "bench[1]:", "--clean-existing", "--driver", "naive,lockcore",
		"--concurrency", "4", "--keys", "50", "--duration", "300ms", "--warmup", "0s", "--out", dir)
	if code, _ := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	keys, err := rdb.Do(ctx, rdb.B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"user:keep", "x{bench[1]:k}"}) {
		t.Errorf("keys after the run %v, want only user:keep and x{bench[1]:k} (the user's keys kept, lockbench's deleted)", keys)
	}
	if f := readResult(t, dir); f.Topology.Provider != "attached" || len(f.Runs) != 2 {
		t.Errorf("topology %+v, %d runs", f.Topology, len(f.Runs))
	}
	if pidLine.MatchString(errb.String()) {
		t.Errorf("lockbench claims to have started a server while attaching:\n%s", errb)
	}
}

func TestRunBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"--topology", "ring"}, `--topology: compose: bad topology "ring"`},
		{[]string{"--topology", "masters:0"}, "masters:N needs N from 1"},
		{[]string{"--topology", "masters:x"}, "masters:N needs N"},
		{[]string{"--master-name", "orders"}, "--master-name is for --topology sentinel"},
		{[]string{"--topology", "sentinel", "--master-name", ""}, "--master-name"},
		{[]string{"--topology", "sentinel", "--master-name", "my master"}, "without spaces"},
		{[]string{"--provider", "podman"}, `--provider "podman": want native or docker`},
		{[]string{"--provider", "docker", "--addr", "127.0.0.1:1"}, "with --addr it attaches"},
		{[]string{"--repeat", "0"}, "--repeat 0"},
		{[]string{"--repeat", "-2"}, "--repeat -2"},
		{[]string{"--baseline", "redsync"}, `--baseline "redsync" is not one of --driver naive,lockcore`},
		{[]string{"--driver", "naive,naive"}, "lists naive twice"},
		{[]string{"--read-ratio", "1.5"}, "--read-ratio 1.5: want 0 to 1"},
		{[]string{"--read-ratio", "-0.1"}, "--read-ratio -0.1: want 0 to 1"},
		{[]string{"--read-ratio", "NaN"}, "--read-ratio NaN: want 0 to 1"},
		{[]string{"--read-ratio", "most"}, "--read-ratio"},
		{[]string{"--fanout", "0"}, "--fanout 0: want 1 to 1000"},
		{[]string{"--fanout", "-3"}, "--fanout -3"},
		{[]string{"--workload", "multilock", "--keys", "4", "--fanout", "5"}, "--fanout 5: want 1 to 4"},
		{[]string{"--fanout", "1001"}, "at most 1000"},
		// Refused before any deployment starts: an option the topology has no use for.
		{[]string{"--driver", "naive,lockcore:node_timeout=1s"}, "node_timeout is for --topology masters (RedLock); on single"},
		{[]string{"--topology", "masters:3", "--driver", "redsync,lockcore:batch=0"}, "option batch has no use on --topology masters"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"run"}, tc.args...), &out, &errb)
		all := out.String() + errb.String()
		if code != exitUsage || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench run %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, exitUsage, tc.out)
		}
	}
}

// With no Docker engine (as on the CI machine), --provider docker fails fast and says why.
func TestProviderDockerWithoutEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	var out, errb bytes.Buffer
	code := dispatch([]string{"run", "--provider", "docker", "--duration", "100ms", "--no-results"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "Docker") {
		t.Fatalf("exit %d, stderr %q: want exit %d naming Docker", code, errb.String(), exitFailure)
	}
}

// TestRunReadRatioAndFanoutFlags checks how the flags reach the workload: --read-ratio 0 means
// writes only (0 in workloads.Config means the default), and without --fanout the default
// shrinks to --keys instead of refusing a small --keys.
func TestRunReadRatioAndFanoutFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args      []string
		readRatio float64
		fanout    int
	}{
		{nil, 0.9, 3},
		{[]string{"--read-ratio", "0"}, 0, 3},
		{[]string{"--read-ratio", "1", "--fanout", "7"}, 1, 7},
		{[]string{"--keys", "2"}, 0.9, 2},
		{[]string{"--keys", "2", "--fanout", "2"}, 0.9, 2},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		f, code, ok := parseRunFlags(tc.args, &out, &errb)
		if !ok {
			t.Errorf("%q: exit %d, %s", tc.args, code, errb.String())
			continue
		}
		cfg := f.cfg
		cfg.Fill()
		if cfg.ReadRatio != tc.readRatio || cfg.Fanout != tc.fanout {
			t.Errorf("%q: read ratio %v, fanout %d; want %v and %d", tc.args, cfg.ReadRatio, cfg.Fanout, tc.readRatio, tc.fanout)
		}
	}
}

// TestThresholdsInRun: thresholds are listed after the summary, and a failed one exits with its
// own code while the run itself (no errors, no violations) succeeded.
func TestThresholdsInRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "4", "--keys", "100",
		"--duration", "500ms", "--warmup", "100ms", "--repeat", "2", "--out", dir,
		"--threshold", "violations==0", "--threshold", "throughput>1",
		"--threshold", "lockcore/naive throughput>=1000", "--threshold", "p99<60s")
	cmd.Wait()
	out := cmd.Stdout.(*bytes.Buffer).String()
	if code := cmd.ProcessState.ExitCode(); code != exitThresholds {
		t.Fatalf("exit %d, want %d (a threshold failed)\nstdout:\n%s\nstderr:\n%s", code, exitThresholds, out, errb)
	}
	for _, want := range []string{
		"thresholds: 3 of 4 passed",
		"ok    violations==0: lockcore 0",
		"ok    violations==0: naive 0",
		"FAIL  lockcore/naive throughput>=1000: lockcore/naive ",
		"(median of 2 per-round ratios)",
		"ok    p99<60s: naive ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb.String(), "1 of 4 thresholds failed") {
		t.Errorf("stderr does not say a threshold failed:\n%s", errb)
	}
	if f := readResult(t, dir); len(f.Runs) != 4 {
		t.Errorf("%d runs in the result, want 4", len(f.Runs))
	}
	assertServerGone(t, errb.String())
}

// everyDriverClean fails t unless every driver of the comma-separated list all ran in f, with
// acquisitions, no violation, no error, to the end.
func everyDriverClean(t *testing.T, f *results.File, all string) {
	t.Helper()
	ran := map[string]bool{}
	for _, r := range f.Runs {
		ran[r.Driver] = true
		if r.Acquisitions == 0 || r.Violations != 0 || r.Errors != 0 || !r.Complete {
			t.Errorf("%s: %d acquisitions, violations %d, errors %d %v, complete %v", r.Driver, r.Acquisitions, r.Violations, r.Errors, r.ErrorsByKind, r.Complete)
		}
	}
	for _, d := range strings.Split(all, ",") {
		if !ran[d] {
			t.Errorf("driver %s did not run (skipped: %+v)", d, f.Skipped)
		}
	}
}
